/** Comparing our logits with llama.cpp's. */

/** log-softmax in doubles: logits minus their log-sum-exp, so two runs compare without the free constant. */
export function logSoftmax(logits: ArrayLike<number>): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i]);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i] - max);
  const lse = max + Math.log(sum);
  return Float64Array.from(logits as ArrayLike<number>, (v) => v - lse);
}

/**
 * Normalised mean squared error Σ(a−b)² / Σ(b−mean b)², ggml test-backend-ops style, with b the
 * oracle. Centring b makes it blind to the constant log-softmax removes and scale-free.
 */
export function nmse(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`nmse: lengths ${a.length} and ${b.length} differ`);
  let mean = 0;
  for (let i = 0; i < b.length; i++) mean += b[i];
  mean /= b.length;
  let err = 0;
  let ref = 0;
  for (let i = 0; i < a.length; i++) {
    err += (a[i] - b[i]) ** 2;
    ref += (b[i] - mean) ** 2;
  }
  return err / ref;
}

/** How many leading tokens two greedy runs share. */
export function sharedPrefix(a: readonly number[], b: readonly number[]): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}
