// The streaming read's 4-byte (scalar) loads.
alias Word = u32;

fn word_total(a: Word) -> u32 {
  return a;
}
