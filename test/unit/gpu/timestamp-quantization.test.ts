import { describe, expect, it } from 'vitest';
import { quantizationOf } from '../../../src/gpu/timer.ts';

describe('timestamp quantization', () => {
  it("recognises Dawn's 65.536 µs rounding", () => {
    const stamps = [3n, 4n, 9n, 10n, 11n, 40n, 41n, 77n].map((k) => k * 65536n + 1_000_000n * 65536n);
    expect(quantizationOf(stamps)).toEqual({ quantized: true, quantum_ns: 65536 });
  });

  it('calls a nanosecond clock unquantized', () => {
    const stamps = [1_000_003n, 1_020_118n, 1_020_700n, 1_050_001n, 1_050_902n, 1_090_013n, 1_090_555n, 1_200_004n];
    expect(quantizationOf(stamps)).toEqual({ quantized: false, quantum_ns: 1 });
  });

  it('needs eight nonzero stamps to tell', () => {
    expect(quantizationOf([65536n, 131072n, 0n, 0n])).toBeNull();
  });
});
