/**
 * Uniform layouts derived from the WGSL (as webgpu-utils does with wgsl_reflect, reduced to what
 * tokenscope's shaders declare): `reflectUniform` reads the struct of a module's one
 * `var<uniform>` — scalars u32/i32/f32 and vec2/vec3/vec4 of them — and places its fields by the
 * WGSL rules (§ alignment and size: a member starts at the next multiple of its type's alignment;
 * the struct's alignment is its largest member's and its size the end of the last member rounded up
 * to it). `npm run shaders` runs it at build time and writes the layouts into
 * src/kernels/shaders.generated.ts; at run time `packUniform` writes values by field name, so a
 * field reordered in WGSL cannot be packed at the wrong offset.
 */

export type UniformScalar = 'u32' | 'i32' | 'f32';

/** A field's WGSL type in canonical spelling: `u32`, `vec4<f32>`, … */
export type UniformType = UniformScalar | `vec${2 | 3 | 4}<${UniformScalar}>`;

export interface UniformField {
  /** Byte offset in the struct. */
  offset: number;
  type: UniformType;
}

export interface UniformLayout {
  /** SizeOf(struct) per the WGSL rules; the buffer is this rounded up to 16 (`uniformBytes`). */
  size: number;
  /** Fields by name, in declaration order. A name starting with `_` is padding and never written. */
  fields: Readonly<Record<string, UniformField>>;
}

/** Alignment and size in bytes of each type in the uniform address space (WGSL "Alignment and Size"). */
function alignSize(type: UniformType): { align: number; size: number; count: number; scalar: UniformScalar } {
  const vec = /^vec([234])<(u32|i32|f32)>$/.exec(type);
  if (!vec) return { align: 4, size: 4, count: 1, scalar: type as UniformScalar };
  const n = Number(vec[1]);
  return { align: n === 2 ? 8 : 16, size: 4 * n, count: n, scalar: vec[2] as UniformScalar };
}

const SHORTHAND: Record<string, UniformScalar> = { f: 'f32', u: 'u32', i: 'i32' };

/** `vec4f` → `vec4<f32>`; anything that is not a supported scalar or vector throws. */
function canonicalType(text: string, where: string): UniformType {
  const t = text.replace(/\s+/g, '');
  if (t === 'u32' || t === 'i32' || t === 'f32') return t;
  const short = /^vec([234])([fui])$/.exec(t);
  if (short) return `vec${Number(short[1]) as 2 | 3 | 4}<${SHORTHAND[short[2]]}>`;
  const long = /^vec([234])<(u32|i32|f32)>$/.exec(t);
  if (long) return `vec${Number(long[1]) as 2 | 3 | 4}<${long[2] as UniformScalar}>`;
  throw new Error(`${where}: uniform field type ${text} is not supported (u32, i32, f32 and vec2/3/4 of them)`);
}

/** WGSL without its comments (line comments and, nested or not, block comments). */
function stripComments(wgsl: string): string {
  let out = '';
  let depth = 0;
  for (let i = 0; i < wgsl.length; i++) {
    const two = wgsl.slice(i, i + 2);
    if (two === '/*') {
      depth++;
      i++;
    } else if (depth > 0 && two === '*/') {
      depth--;
      i++;
    } else if (depth === 0 && two === '//') {
      while (i < wgsl.length && wgsl[i] !== '\n') i++;
      out += '\n';
    } else if (depth === 0) {
      out += wgsl[i];
    }
  }
  return out;
}

const roundUp = (n: number, to: number) => Math.ceil(n / to) * to;

/** The layout of a struct's members (name, WGSL type) laid out by the WGSL rules. */
export function layoutOf(members: readonly (readonly [string, UniformType])[]): UniformLayout {
  const fields: Record<string, UniformField> = {};
  let end = 0;
  let align = 4;
  for (const [name, type] of members) {
    const t = alignSize(type);
    const offset = roundUp(end, t.align);
    fields[name] = { offset, type };
    end = offset + t.size;
    align = Math.max(align, t.align);
  }
  return { size: roundUp(end, align), fields };
}

/**
 * The layout of `wgsl`'s uniform struct, or null when it declares no `var<uniform>`. Throws on
 * more than one uniform, on a uniform that is not a struct declared in `wgsl`, and on members it
 * does not understand (attributes such as @align/@size, arrays, matrices, nested structs, f16).
 */
export function reflectUniform(wgsl: string, where = 'WGSL'): UniformLayout | null {
  const code = stripComments(wgsl);
  const uniforms = [...code.matchAll(/var\s*<\s*uniform\s*>\s*(\w+)\s*:\s*(\w+)/g)];
  if (uniforms.length === 0) return null;
  if (uniforms.length > 1) throw new Error(`${where}: ${uniforms.length} uniform variables; a kernel has one (its Params)`);
  const typeName = uniforms[0][2];
  const structs = [...code.matchAll(new RegExp(`struct\\s+${typeName}\\s*\\{([^}]*)\\}`, 'g'))];
  if (structs.length !== 1) throw new Error(`${where}: uniform type ${typeName} must be a struct declared once in the module (found ${structs.length})`);
  const members = structs[0][1]
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m.length > 0)
    .map((m): [string, UniformType] => {
      const member = /^(\w+)\s*:\s*(.+)$/s.exec(m);
      if (!member) throw new Error(`${where}: cannot read uniform member "${m}" of ${typeName} (attributes are not supported)`);
      return [member[1], canonicalType(member[2], `${where} ${typeName}.${member[1]}`)];
    });
  return layoutOf(members);
}

/** Bytes of the uniform buffer for `layout`: its size rounded up to 16. */
export function uniformBytes(layout: UniformLayout): number {
  return roundUp(Math.max(layout.size, 16), 16);
}

/** A value for a field: a number for a scalar, one number per component for a vector. */
export type UniformValue = number | readonly number[];

/**
 * The uniform's bytes with every field of `layout` written by name (little-endian). Throws on a
 * name the struct does not have, on a field left out (padding, `_…`, excepted), on a vector of the
 * wrong length and on a u32/i32 value that is not an integer in range.
 */
export function packUniform(layout: UniformLayout, values: Readonly<Record<string, UniformValue>>): ArrayBuffer {
  const unknown = Object.keys(values).filter((name) => !(name in layout.fields) || name.startsWith('_'));
  if (unknown.length > 0) throw new Error(`uniform has no field ${unknown.join(', ')} (fields: ${Object.keys(layout.fields).join(', ')})`);
  const missing = Object.keys(layout.fields).filter((name) => !name.startsWith('_') && !(name in values));
  if (missing.length > 0) throw new Error(`uniform field ${missing.join(', ')} not given`);
  const data = new DataView(new ArrayBuffer(uniformBytes(layout)));
  for (const [name, value] of Object.entries(values)) {
    const { offset, type } = layout.fields[name];
    const { count, scalar } = alignSize(type);
    const components = typeof value === 'number' ? [value] : value;
    if (components.length !== count || (count > 1 && typeof value === 'number')) throw new Error(`uniform field ${name} (${type}) needs ${count} component(s)`);
    components.forEach((v, i) => {
      const at = offset + 4 * i;
      if (scalar === 'f32') return data.setFloat32(at, v, true);
      const [lo, hi] = scalar === 'u32' ? [0, 2 ** 32 - 1] : [-(2 ** 31), 2 ** 31 - 1];
      if (!(Number.isInteger(v) && v >= lo && v <= hi)) throw new RangeError(`uniform field ${name} (${type}): ${v} is not a ${scalar}`);
      if (scalar === 'u32') data.setUint32(at, v, true);
      else data.setInt32(at, v, true);
    });
  }
  return data.buffer;
}
