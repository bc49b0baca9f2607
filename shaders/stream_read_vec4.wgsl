// The streaming read's 16-byte loads.
alias Word = vec4<u32>;

fn word_total(a: Word) -> u32 {
  return a.x + a.y + a.z + a.w;
}
