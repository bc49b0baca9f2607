/**
 * Plausible ranges of every kind of number a result holds, and the size caps of its lists. A value
 * outside them is refused with its field named: a hostile link must not hand a chart a number its
 * axis code cannot lay out (Chart.js loops forever on ~1.5e308), and none of these bounds is near
 * what a real run measures.
 */
import { int, num } from '../schema-kit.ts';

/** Most prompt lengths (rows, verdicts), depth bins and kernel rows a section may hold. */
export const MAX_ROWS = 256;
/** Most timed requests of a latency sweep or a serving run. */
export const MAX_REQUESTS = 100_000;
/** Most entries of one per-token array (a request's output tokens, a prompt's ids). */
export const MAX_TOKENS = 1 << 20;
/** Longest name-like string (model id, quantization, kernel class) and longest sentence. */
export const MAX_NAME = 256;
export const MAX_SENTENCE = 2000;
/** Longest generated text. */
export const MAX_TEXT = 1 << 20;

/** A duration or a time after some start, ms (under 10⁷ ms ≈ 2.8 h). */
export const ms = () => num(0, 1e7);
/** A difference of times, ms (may be negative). */
export const signedMs = () => num(-1e7, 1e7);
/** A duration in seconds (vLLM's serving keys). */
export const seconds = () => num(0, 1e5);
/** A bandwidth, GB/s (10⁹ bytes/s; 100 TB/s is far above any device). */
export const gbps = () => num(0, 1e5);
/** A compute rate, GFLOP/s (10 PFLOP/s). */
export const gflops = () => num(0, 1e7);
/** A rate in FLOP/s or bytes/s. */
export const perSecond = () => num(0, 1e17);
/** FLOPs or bytes of one step or one repetition. */
export const work = () => num(0, 1e18);
/** Bytes of a model or a buffer (1 PB). */
export const bytes = () => num(0, 1e15);
/** Tokens per second. */
export const tokensPerS = () => num(0, 1e8);
/** Requests per second. */
export const requestsPerS = () => num(0, 1e7);
/** A count of tokens, requests, steps or repetitions. */
export const count = () => int(0, 1e9);
/** A token id. */
export const tokenId = () => int(0, 1e8);
/** A part of a whole, 0…1. */
export const fraction = () => num(0, 1);
/** A ratio of two measured figures (efficiency, share of a roof; may exceed 1 by noise). */
export const ratio = () => num(0, 1e6);
/** A signed relative difference. */
export const signedRatio = () => num(-1e6, 1e6);
/** Arithmetic intensity, FLOP per byte. */
export const intensity = () => num(0, 1e6);
/** A seed (any safe integer-sized number). */
export const seed = () => num(-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
