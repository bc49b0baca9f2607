import { mulberry32 } from '../../src/random.ts';

const random = mulberry32(25);
const PARAGRAPH =
  'The committee met on Tuesday, 3 March, to review the budget (about $1.2M) and the new schedule. ' +
  "Members asked why costs rose 14% — the answer: shipping, staff and a delayed vendor. It's fine, they'll try again.\n\n";

/**
 * Strings whose tokenization goes wrong first: digits, whitespace runs, newlines, emoji, CJK, code,
 * special-token text; then long ones, where a merge order that differs from llama.cpp's, or one
 * that slows down, shows (issue 25): one long word, long whitespace runs (Gemma 3 has a special
 * token for each run of up to 31 spaces or newlines), random printable text, plain prose.
 */
export const TRICKY_STRINGS: readonly string[] = [
  'Hello world',
  ' Hello  world ',
  '1234567890 3.14159 1,000,000 -42 007',
  'a  b   c    d     e',
  '   leading and trailing   ',
  'line1\nline2\n\n\nline3\r\nline4\r\n\r\n',
  '\tindented\t\ttabs \t mixed',
  'Emoji 👋🏽 🎉🇺🇸 👨‍👩‍👧 ✨',
  '你好，世界。日本語のテキストと한국어',
  'Привет мир! Ελληνικά. naïve café Ñandú',
  'function f(x) {\n  return x ** 2; // square\n}\n\nif (a && b || !c) { arr[i++] = "s"; }',
  "I'm, you're, they'll, we'd, it's, DON'T, Y'ALL'D've",
  'e\u0301 vs é, ∑∫√∞≠, a\u00a0b\u2009c',
  '<|begin_of_text|>hi<|eot_id|> <|im_start|>user\nhi<|im_end|> <start_of_turn>user\nhi<end_of_turn> <bos><eos>',
  '<think>reason</think> <tool_call>{"a":1}</tool_call>',
  'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  '\n',
  ' ',
  '!!!???...,,,',
  '\uFEFF// a comment after a byte-order mark',
  'a'.repeat(20_000),
  'ab'.repeat(5_000) + ' ' + 'xyz'.repeat(3_000),
  ' '.repeat(5_000) + 'x' + '\n'.repeat(3_000) + '\t'.repeat(1_000),
  Array.from({ length: 20_000 }, () => String.fromCharCode(32 + Math.floor(random() * 95))).join(''),
  PARAGRAPH.repeat(100),
];
