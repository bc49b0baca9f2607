/**
 * The K-quant encoders (256-value super-blocks), reproducing ggml-quants.c's reference path
 * (`quantize_row_q4_K_ref`, `_q5_K_ref`, `_q6_K_ref` with `make_qkx2_quants` / `make_qx_quants`),
 * which is what llama-quantize runs when no importance matrix is given. Every float operation
 * is rounded to f32 with Math.fround in C's evaluation order (no FMA contraction).
 */
import { f16BitsToF32, f32ToF16Bits } from '../f16.ts';
import { scaleMinK4 } from './quant.ts';

const fr = Math.fround;
const QK_K = 256;
/** ggml's GROUP_MAX_EPS: a group whose largest magnitude is below this is all zero. */
const GROUP_MAX_EPS = fr(1e-15);

/** ggml's nearest_int: round half to even via the 1.5·2²³ trick (|v| < 2²²). */
export function nearestInt(v: number): number {
  return fr(v + 12582912) - 12582912;
}

/** Write f16(value) at `at` and return the f16's value as ggml reads it back. */
function putF16(out: Uint8Array, at: number, value: number): number {
  const h = f32ToF16Bits(value);
  out[at] = h & 0xff;
  out[at + 1] = h >>> 8;
  return f16BitsToF32(h);
}

/**
 * make_qkx2_quants: levels L ∈ [0, nmax] with x ≈ scale·L − min (min ≥ 0), choosing among
 * nstep+1 trial scales the one with the least weighted error. Returns [scale, min].
 */
function makeQkx2Quants(
  n: number,
  nmax: number,
  x: Float32Array,
  w: Float32Array,
  L: Uint8Array,
  rmin: number,
  rdelta: number,
  nstep: number,
): [number, number] {
  const aux = new Uint8Array(n);
  let min = x[0];
  let max = x[0];
  let sumW = w[0];
  let sumX = fr(sumW * x[0]);
  for (let i = 1; i < n; i++) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    sumW = fr(sumW + w[i]);
    sumX = fr(sumX + fr(w[i] * x[i]));
  }
  if (min > 0) min = 0;
  if (max === min) {
    L.fill(0, 0, n);
    return [0, -min];
  }
  let iscale = fr(nmax / fr(max - min));
  let scale = fr(1 / iscale);
  const error = (s: number, m: number, levels: Uint8Array) => {
    let e = 0;
    for (let i = 0; i < n; i++) {
      const diff = fr(fr(fr(s * levels[i]) + m) - x[i]);
      e = fr(e + fr(w[i] * fr(diff * diff)));
    }
    return e;
  };
  for (let i = 0; i < n; i++) L[i] = Math.max(0, Math.min(nmax, nearestInt(fr(iscale * fr(x[i] - min)))));
  let bestError = error(scale, min, L);
  for (let is = 0; is <= nstep; is++) {
    // `min` is the best solution's so far, as in C: a better trial moves the range the next ones span.
    iscale = fr(fr(fr(rmin + fr(rdelta * is)) + nmax) / fr(max - min));
    let sumL = 0;
    let sumL2 = 0;
    let sumXL = 0;
    for (let i = 0; i < n; i++) {
      const l = Math.max(0, Math.min(nmax, nearestInt(fr(iscale * fr(x[i] - min)))));
      aux[i] = l;
      const wl = fr(w[i] * l);
      sumL = fr(sumL + wl);
      sumL2 = fr(sumL2 + fr(wl * l));
      sumXL = fr(sumXL + fr(wl * x[i]));
    }
    const D = fr(fr(sumW * sumL2) - fr(sumL * sumL));
    if (D > 0) {
      let thisScale = fr(fr(fr(sumW * sumXL) - fr(sumX * sumL)) / D);
      let thisMin = fr(fr(fr(sumL2 * sumX) - fr(sumL * sumXL)) / D);
      if (thisMin > 0) {
        thisMin = 0;
        thisScale = fr(sumXL / sumL2);
      }
      const e = error(thisScale, thisMin, aux);
      if (e < bestError) {
        L.set(aux.subarray(0, n));
        bestError = e;
        scale = thisScale;
        min = thisMin;
      }
    }
  }
  return [scale, -min];
}

/**
 * make_qx_quants with rmse_type 1 (weights x²): signed levels L − nmax ∈ [−nmax, nmax − 1],
 * x ≈ scale·(L − nmax), trying 18 scales around −nmax/max. Returns the scale.
 */
function makeQxQuants(n: number, nmax: number, x: Float32Array, L: Uint8Array): number {
  let max = 0;
  let amax = 0;
  for (let i = 0; i < n; i++) {
    const ax = Math.abs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < GROUP_MAX_EPS) {
    L.fill(0, 0, n);
    return 0;
  }
  const level = (iscale: number, v: number) => Math.max(-nmax, Math.min(nmax - 1, nearestInt(fr(iscale * v))));
  const sums = (iscale: number): [number, number] => {
    let sumlx = 0;
    let suml2 = 0;
    for (let i = 0; i < n; i++) {
      const l = level(iscale, x[i]);
      const w = fr(x[i] * x[i]);
      sumlx = fr(sumlx + fr(fr(w * x[i]) * l));
      suml2 = fr(suml2 + fr(fr(w * l) * l));
    }
    return [sumlx, suml2];
  };
  let iscale = fr(-nmax / max);
  for (let i = 0; i < n; i++) L[i] = level(iscale, x[i]) + nmax;
  let [sumlx, suml2] = sums(iscale);
  let scale = suml2 ? fr(sumlx / suml2) : 0;
  let best = fr(scale * sumlx);
  for (let is = -9; is <= 9; is++) {
    if (is === 0) continue;
    iscale = fr(-fr(nmax + fr(fr(0.1) * is)) / max);
    [sumlx, suml2] = sums(iscale);
    if (suml2 > 0 && fr(sumlx * sumlx) > fr(best * suml2)) {
      for (let i = 0; i < n; i++) L[i] = level(iscale, x[i]) + nmax;
      scale = fr(sumlx / suml2);
      best = fr(scale * sumlx);
    }
  }
  return scale;
}

/** Pack 8 six-bit scales and mins into the 12 bytes at `at` (the inverse of get_scale_min_k4). */
function packScalesK4(out: Uint8Array, at: number, ls: Uint8Array, lm: Uint8Array): void {
  for (let j = 0; j < 8; j++) {
    if (j < 4) {
      out[at + j] = ls[j];
      out[at + j + 4] = lm[j];
    } else {
      out[at + j + 4] = (ls[j] & 0xf) | ((lm[j] & 0xf) << 4);
      out[at + j - 4] |= (ls[j] >> 4) << 6;
      out[at + j] |= (lm[j] >> 4) << 6;
    }
  }
}

/** Q4_K (five = false, 144 bytes a super-block) or Q5_K (five = true, 176 bytes). */
export function quantizeQ45K(x: Float32Array, five: boolean): Uint8Array<ArrayBuffer> {
  const nmax = five ? 31 : 15;
  const blockBytes = five ? 176 : 144;
  const out = new Uint8Array((x.length / QK_K) * blockBytes);
  const L = new Uint8Array(QK_K);
  const weights = new Float32Array(32);
  const scales = new Float32Array(8);
  const mins = new Float32Array(8);
  for (let b = 0, at = 0; b < x.length; b += QK_K, at += blockBytes) {
    let maxScale = 0;
    let maxMin = 0;
    for (let j = 0; j < 8; j++) {
      const xs = x.subarray(b + 32 * j, b + 32 * j + 32);
      let sumX2 = 0;
      for (let l = 0; l < 32; l++) sumX2 = fr(sumX2 + fr(xs[l] * xs[l]));
      const avX = fr(Math.sqrt(fr(sumX2 / 32)));
      for (let l = 0; l < 32; l++) weights[l] = fr(avX + Math.abs(xs[l]));
      [scales[j], mins[j]] = five
        ? makeQkx2Quants(32, nmax, xs, weights, L.subarray(32 * j), -0.5, fr(0.1), 15)
        : makeQkx2Quants(32, nmax, xs, weights, L.subarray(32 * j), -1, fr(0.1), 20);
      if (scales[j] > maxScale) maxScale = scales[j];
      if (mins[j] > maxMin) maxMin = mins[j];
    }
    const invScale = maxScale > 0 ? fr(63 / maxScale) : 0;
    const invMin = maxMin > 0 ? fr(63 / maxMin) : 0;
    const ls = Uint8Array.from(scales, (s) => Math.min(63, nearestInt(fr(invScale * s)) & 0xff));
    const lm = Uint8Array.from(mins, (m) => Math.min(63, nearestInt(fr(invMin * m)) & 0xff));
    packScalesK4(out, at + 4, ls, lm);
    const d = putF16(out, at, fr(maxScale / 63));
    const dmin = putF16(out, at + 2, fr(maxMin / 63));
    for (let j = 0; j < 8; j++) {
      const [sc, m] = scaleMinK4(out, at + 4, j);
      const dj = fr(d * sc);
      if (!dj) continue;
      const dm = fr(dmin * m);
      for (let i = 0; i < 32; i++) L[32 * j + i] = Math.max(0, Math.min(nmax, nearestInt(fr(fr(x[b + 32 * j + i] + dm) / dj))));
    }
    const qs = at + (five ? 48 : 16);
    for (let g = 0; g < 4; g++) {
      for (let l = 0; l < 32; l++) {
        const lo = L[64 * g + l];
        const hi = L[64 * g + 32 + l];
        out[qs + 32 * g + l] = (lo & 15) | ((hi & 15) << 4);
        if (five) out[at + 16 + l] |= ((lo >> 4) << (2 * g)) | ((hi >> 4) << (2 * g + 1));
      }
    }
  }
  return out;
}

/** Q6_K: 210 bytes a super-block, 16 sub-blocks of 16 with int8 scales. */
export function quantizeQ6K(x: Float32Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array((x.length / QK_K) * 210);
  const L = new Uint8Array(QK_K);
  const scales = new Float32Array(16);
  for (let b = 0, at = 0; b < x.length; b += QK_K, at += 210) {
    let maxScale = 0;
    let maxAbsScale = 0;
    for (let ib = 0; ib < 16; ib++) {
      scales[ib] = makeQxQuants(16, 32, x.subarray(b + 16 * ib, b + 16 * ib + 16), L.subarray(16 * ib));
      if (Math.abs(scales[ib]) > maxAbsScale) {
        maxAbsScale = Math.abs(scales[ib]);
        maxScale = scales[ib];
      }
    }
    if (maxAbsScale < GROUP_MAX_EPS) continue; // an all-zero block: every byte 0, d = +0
    const iscale = fr(-128 / maxScale);
    const d = putF16(out, at + 208, fr(1 / iscale));
    for (let ib = 0; ib < 16; ib++) out[at + 192 + ib] = Math.min(127, nearestInt(fr(iscale * scales[ib]))) & 0xff;
    for (let j = 0; j < 16; j++) {
      const dj = fr(d * ((out[at + 192 + j] << 24) >> 24));
      if (!dj) continue;
      for (let i = 0; i < 16; i++) L[16 * j + i] = Math.max(-32, Math.min(31, nearestInt(fr(x[b + 16 * j + i] / dj)))) + 32;
    }
    for (let h = 0; h < 2; h++) {
      for (let l = 0; l < 32; l++) {
        const q = [0, 32, 64, 96].map((o) => L[128 * h + l + o]);
        out[at + 64 * h + l] = (q[0] & 15) | ((q[2] & 15) << 4);
        out[at + 64 * h + l + 32] = (q[1] & 15) | ((q[3] & 15) << 4);
        out[at + 128 + 32 * h + l] = (q[0] >> 4) | ((q[1] >> 4) << 2) | ((q[2] >> 4) << 4) | ((q[3] >> 4) << 6);
      }
    }
  }
  return out;
}
