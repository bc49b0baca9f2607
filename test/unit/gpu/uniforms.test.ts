/**
 * Uniform layouts reflected from WGSL follow the WGSL alignment and size rules, and packing writes
 * by field name: an unknown or a missing field throws (and fails to type-check through packParams).
 */
import { describe, expect, it } from 'vitest';
import { layoutOf, packUniform, reflectUniform, uniformBytes } from '../../../src/gpu/uniforms.ts';
import { packParams, UNIFORMS } from '../../../src/kernels/shaders.ts';

const offsets = (wgsl: string) => {
  const layout = reflectUniform(wgsl)!;
  return { size: layout.size, ...Object.fromEntries(Object.entries(layout.fields).map(([name, f]) => [name, f.offset])) };
};

describe('reflectUniform', () => {
  it('places mixed scalars and vectors by their alignment (WGSL "Alignment and Size")', () => {
    const wgsl = `
      struct Params {
        a: u32,          // 0
        b: f32,          // 4
        c: vec4<f32>,    // align 16 → 16
        d: i32,          // 32
        e: vec2u,        // align 8 → 40
        f: vec3<f32>,    // align 16 → 48, size 12
        g: f32,          // fits after the vec3: 60
      }
      @group(0) @binding(0) var<uniform> params: Params;`;
    expect(offsets(wgsl)).toEqual({ size: 64, a: 0, b: 4, c: 16, d: 32, e: 40, f: 48, g: 60 });
    expect(reflectUniform(wgsl)!.fields.e.type).toBe('vec2<u32>');
  });

  it('rounds the struct size up to its alignment and the buffer up to 16 bytes', () => {
    const scalars = layoutOf([
      ['a', 'u32'],
      ['b', 'f32'],
      ['c', 'u32'],
    ]);
    expect([scalars.size, uniformBytes(scalars)]).toEqual([12, 16]);
    const vec2 = layoutOf([
      ['v', 'vec2<f32>'],
      ['s', 'f32'],
    ]);
    expect([vec2.size, uniformBytes(vec2)]).toEqual([16, 16]);
    const vec4 = layoutOf([
      ['s', 'u32'],
      ['v', 'vec4<f32>'],
      ['t', 'u32'],
    ]);
    expect([vec4.fields.v.offset, vec4.fields.t.offset, vec4.size, uniformBytes(vec4)]).toEqual([16, 32, 48, 48]);
  });

  it('reads through comments, finds the struct by the uniform variable, and is null without one', () => {
    const wgsl = `/* struct Params { wrong: vec4f } */
      struct Other { x: u32 }
      struct P { n: u32, /* nested /* comment */ */ eps: f32 } // trailing
      @group(0) @binding(1) var<uniform> p: P;`;
    expect(offsets(wgsl)).toEqual({ size: 8, n: 0, eps: 4 });
    expect(reflectUniform('@compute @workgroup_size(1) fn main() {}')).toBeNull();
  });

  it('refuses what it does not understand', () => {
    const one = (member: string) => `struct P { ${member} } @group(0) @binding(0) var<uniform> p: P;`;
    expect(() => reflectUniform(one('@align(16) a: u32,'))).toThrow(/attributes/);
    expect(() => reflectUniform(one('a: array<vec4f, 2>,'))).toThrow(/not supported/);
    expect(() => reflectUniform(one('a: mat4x4f,'))).toThrow(/not supported/);
    expect(() => reflectUniform(one('a: f16,'))).toThrow(/not supported/);
    expect(() => reflectUniform(`${one('a: u32')} @group(0) @binding(1) var<uniform> q: P;`)).toThrow(/2 uniform/);
    expect(() => reflectUniform('@group(0) @binding(0) var<uniform> p: Missing;')).toThrow(/struct declared once/);
  });
});

describe('packUniform', () => {
  const layout = layoutOf([
    ['rows', 'u32'],
    ['eps', 'f32'],
    ['shift', 'i32'],
    ['_pad', 'u32'],
    ['v', 'vec4<f32>'],
  ]);

  it('writes each field at its offset, little-endian, padding left zero', () => {
    const data = new DataView(packUniform(layout, { rows: 7, eps: 0.5, shift: -3, v: [1, 2, 3, 4] }));
    expect(data.byteLength).toBe(32);
    expect([data.getUint32(0, true), data.getFloat32(4, true), data.getInt32(8, true), data.getUint32(12, true)]).toEqual([7, 0.5, -3, 0]);
    expect([16, 20, 24, 28].map((o) => data.getFloat32(o, true))).toEqual([1, 2, 3, 4]);
  });

  it('throws on an unknown field, a missing one, a written pad, a short vector and an out-of-range integer', () => {
    const ok = { rows: 1, eps: 0, shift: 0, v: [0, 0, 0, 0] };
    expect(() => packUniform(layout, { ...ok, cols: 2 })).toThrow(/no field cols/);
    expect(() => packUniform(layout, { eps: 0, shift: 0, v: [0, 0, 0, 0] })).toThrow(/rows not given/);
    expect(() => packUniform(layout, { ...ok, _pad: 1 })).toThrow(/no field _pad/);
    expect(() => packUniform(layout, { ...ok, v: [1, 2, 3] })).toThrow(/4 component/);
    expect(() => packUniform(layout, { ...ok, rows: -1 })).toThrow(/not a u32/);
    expect(() => packUniform(layout, { ...ok, rows: 1.5 })).toThrow(/not a u32/);
    expect(() => packUniform(layout, { ...ok, shift: 2 ** 31 })).toThrow(/not a i32/);
  });
});

describe('packParams (the kernels’ packing, by the layouts generated from their WGSL)', () => {
  it('packs a kernel uniform by name at the reflected offsets', () => {
    const data = new DataView(packParams('rmsnorm', { dim: 64, eps: 1e-5 }));
    expect(UNIFORMS.rmsnorm.fields.eps.offset).toBe(4);
    expect([data.getUint32(0, true), data.getFloat32(4, true)]).toEqual([64, Math.fround(1e-5)]);
    const linear = UNIFORMS['matvec+q4_0'];
    expect(Object.keys(linear.fields)).toEqual([
      'rows',
      'cols',
      'tokens',
      'y_stride',
      'y_col0',
      'scale_base',
      'eps',
      'split',
      'scale_base_1',
      '_pad0',
      '_pad1',
      '_pad2',
    ]);
  });

  it('fails to type-check (and throws) on a field the struct does not have or one left out', () => {
    // @ts-expect-error — `epsilon` is not a field of rmsnorm's Params.
    expect(() => packParams('rmsnorm', { dim: 64, epsilon: 1e-5 })).toThrow(/no field epsilon/);
    // @ts-expect-error — `eps` is missing.
    expect(() => packParams('rmsnorm', { dim: 64 })).toThrow(/eps not given/);
  });

  it('has a layout for every module that declares a uniform', () => {
    for (const layout of Object.values(UNIFORMS)) expect(layout.size % 4).toBe(0);
    expect(Object.keys(UNIFORMS).length).toBeGreaterThan(80);
  });
});
