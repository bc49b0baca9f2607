/**
 * A budget for the model's chat template. `tokenizer.chat_template` is a program from an untrusted
 * file, and @huggingface/jinja runs it without limits: nested loops run for minutes, and one
 * `range(100000000)`, `indent(300000000)` or `replace` can allocate gigabytes in a single call.
 *
 * The interpreter is the library's own, with hooks on four of its methods (the instance's
 * properties shadow the prototype's): every evaluation, block (a loop iteration, a macro body, an
 * `if` branch) and filter is a step, checked against the step count, the nesting depth and the
 * clock; every value made is checked against the size of one text or list and the bytes made in
 * all. The few operations whose output can be many times their input (`~`/`+` of lists,
 * printing a list, and the `indent`, `join`, `replace`, `tojson` and `string` filters and the
 * `.replace()` method) get their arguments evaluated first and their output size bounded before
 * they run. `range()` is ours, counting before it allocates.
 *
 * The hooks reach private methods of @huggingface/jinja 0.5.13 (pinned in package.json); the
 * hostile templates of test/unit/model/chat-budget.test.ts fail if a new version moves them.
 */
import type { Environment, Interpreter } from '@huggingface/jinja';
import { TokenscopeError } from '../../errors.ts';

export interface RenderBudget {
  /** Characters of the template itself (parsed before any other limit applies: about 1 µs per character). */
  source: number;
  /** Evaluations, blocks (each loop iteration, macro body, branch) and filters, together. */
  steps: number;
  /** Evaluations and blocks inside one another: how deep a recursive macro may go. */
  depth: number;
  /** Characters in any one text the template makes, the rendered prompt included. */
  chars: number;
  /** Items in any one list. */
  items: number;
  /** Bytes of every text and list the template makes, summed over the render (2 per character, 64 per item). */
  bytes: number;
  /** Wall time, milliseconds. */
  ms: number;
}

/**
 * Real templates take a few thousand steps, nest a few dozen levels deep and make a prompt a
 * little longer than the messages (whose text the tokenizer caps at MAX_PROMPT_CHARS); they
 * render in milliseconds.
 */
export const RENDER_BUDGET: RenderBudget = { source: 256_000, steps: 300_000, depth: 400, chars: 2_000_000, items: 100_000, bytes: 256 << 20, ms: 1000 };

type JinjaModule = typeof import('@huggingface/jinja');

/** A runtime value of the library, seen structurally (its classes are not exported). */
interface Value {
  type: string;
  value: unknown;
  builtins: ReadonlyMap<string, Value>;
  toString(): string;
}

interface Node {
  type: string;
  [field: string]: unknown;
}

/** The interpreter's methods the budget hooks or calls. */
interface Internals {
  evaluate(node: Node | undefined, env: Environment): Value;
  renderBlock(statements: Node[], env: Environment): string;
  applyFilter(operand: Value, filter: Node, env: Environment): Value;
  evaluateArguments(args: Node[], env: Environment): [Value[], Map<string, Value>];
  renderIf(node: Node, env: Environment): string;
  renderFor(node: Node, env: Environment): string;
  executeSet(node: Node, env: Environment): void;
}

/** A node standing for a value already evaluated (so the library does not evaluate it twice). */
const EVALUATED = 'tokenscope:Evaluated';
const evaluated = (value: Value): Node => ({ type: EVALUATED, value });

/** Filters whose output size is bounded before they run. */
const MULTIPLIERS = new Set(['indent', 'join', 'replace', 'tojson', 'string']);

/** Renders `template` with `items` as its variables, within `budget`. */
export function renderWithBudget(jinja: JinjaModule, template: string, items: Record<string, unknown>, budget: RenderBudget = RENDER_BUDGET): string {
  if (template.length > budget.source)
    over(`has ${template.length.toLocaleString('en-US')} characters, past the ${budget.source.toLocaleString('en-US')} a template may have`);
  const program = new jinja.Template(template).parsed;
  const meter = new Meter(budget);
  const env = new jinja.Environment();
  declareGlobals(jinja, env, meter);
  for (const [key, value] of Object.entries(items)) env.set(key, value);
  const interpreter = new jinja.Interpreter(env);
  hook(interpreter, meter);
  return (interpreter.run(program) as Value).value as string;
}

/** The library's globals (its setupGlobals is not exported), with a `range()` that counts first. */
function declareGlobals(jinja: JinjaModule, env: Environment, meter: Meter): void {
  for (const [name, value] of [
    ['false', false],
    ['true', true],
    ['none', null],
    ['False', false],
    ['True', true],
    ['None', null],
  ] as const) {
    env.set(name, value);
  }
  env.set('raise_exception', (message: string) => {
    throw new Error(message);
  });
  env.set('range', (start: number, stop?: number, step = 1) => {
    if (stop === undefined) [start, stop] = [0, start];
    if (step === 0) throw new Error('range() step must not be zero');
    meter.items(Math.max(0, Math.ceil((stop - start) / step)));
    const out: number[] = [];
    for (let i = start; step > 0 ? i < stop : i > stop; i += step) out.push(i);
    return out;
  });
  // The library's own strftime_now, through its own globals.
  env.set('strftime_now', (format: string) => new jinja.Template('{{ strftime_now(f) }}').render({ f: format }));
}

function hook(interpreter: Interpreter, meter: Meter): void {
  const self = interpreter as unknown as Internals;
  const proto = Object.getPrototypeOf(interpreter) as Internals;
  for (const name of ['evaluate', 'renderBlock', 'applyFilter', 'evaluateArguments', 'renderIf', 'renderFor', 'executeSet'] as const) {
    if (typeof proto[name] !== 'function') throw new Error(`@huggingface/jinja has no Interpreter.${name}: the chat-template budget needs the pinned version`);
  }
  const evaluate = proto.evaluate.bind(interpreter);
  const applyFilter = proto.applyFilter.bind(interpreter);
  const guarded = new WeakSet<Value>();

  self.evaluate = (node, env) => {
    if (node?.type === EVALUATED) return node.value as Value;
    meter.enter();
    try {
      let result: Value;
      if (node?.type === 'BinaryExpression' && ['~', '+'].includes((node.operator as { value: string }).value)) {
        const left = self.evaluate(node.left as Node, env);
        const right = self.evaluate(node.right as Node, env);
        meter.text(textSize(left, 0, meter.budget.chars) + textSize(right, 0, meter.budget.chars));
        result = evaluate({ ...node, left: evaluated(left), right: evaluated(right) }, env);
      } else if (node?.type === 'MemberExpression') {
        const object = self.evaluate(node.object as Node, env);
        result = evaluate({ ...node, object: evaluated(object) }, env);
        if (typeof object.value === 'string' && result.type === 'FunctionValue' && result === object.builtins.get('replace') && !guarded.has(result)) {
          guardReplaceMethod(object.value, result, meter);
          guarded.add(result);
        }
      } else {
        result = evaluate(node, env);
      }
      meter.made(result, node?.type !== 'Identifier' && !(node?.type === 'MemberExpression' && (node.property as Node).type !== 'SliceExpression'));
      return result;
    } finally {
      meter.leave();
    }
  };

  // The library's renderBlock, with each printed value bounded before it becomes text.
  self.renderBlock = (statements, env) => {
    meter.enter();
    try {
      let out = '';
      for (const statement of statements) {
        switch (statement.type) {
          case 'StringLiteral':
            out += statement.value as string;
            break;
          case 'If':
            out += self.renderIf(statement, env);
            break;
          case 'For':
            out += self.renderFor(statement, env);
            break;
          case 'Set':
            self.executeSet(statement, env);
            break;
          case 'Comment':
            break;
          default: {
            const value = self.evaluate(statement, env);
            if (value.type !== 'NullValue' && value.type !== 'UndefinedValue') {
              meter.text(out.length + textSize(value, 0, meter.budget.chars));
              out += value.toString();
            }
          }
        }
        meter.text(out.length);
      }
      meter.bytes(2 * out.length);
      return out;
    } finally {
      meter.leave();
    }
  };

  self.applyFilter = (operand, filter, env) => {
    meter.step();
    const name = filter.type === 'CallExpression' ? (filter.callee as Node).value : filter.value;
    if (typeof name !== 'string' || !MULTIPLIERS.has(name)) return applyFilter(operand, filter, env);
    const [args, kwargs] = filter.type === 'CallExpression' ? self.evaluateArguments(filter.args as Node[], env) : [[], new Map<string, Value>()];
    meter.text(filterOutputBound(name, operand, args, kwargs, meter.budget.chars));
    if (filter.type !== 'CallExpression') return applyFilter(operand, filter, env);
    const keywords = [...kwargs].map(([key, value]): Node => ({
      type: 'KeywordArgumentExpression',
      key: { type: 'Identifier', value: key },
      value: evaluated(value),
    }));
    return applyFilter(operand, { ...filter, args: [...args.map(evaluated), ...keywords] }, env);
  };
}

/** Wraps a string's bound `.replace()` so that its output is sized before it is made. */
function guardReplaceMethod(text: string, method: Value, meter: Meter): void {
  const original = method.value as (args: Value[], scope: Environment) => Value;
  method.value = (args: Value[], scope: Environment) => {
    const last = args.at(-1);
    const count = last?.type === 'KeywordArgumentsValue' ? (last.value as Map<string, Value>).get('count') : args[2];
    meter.text(replaceBound(text, args[0], args[1], count));
    return original(args, scope);
  };
}

/** Characters the filter's output can have, at most (JSON escapes aside, which add a bounded factor). */
function filterOutputBound(name: string, operand: Value, args: Value[], kwargs: Map<string, Value>, limit: number): number {
  const arg = (i: number, key: string) => args[i] ?? kwargs.get(key);
  switch (name) {
    case 'indent': {
      if (typeof operand.value !== 'string') return 0;
      const width = arg(0, 'width');
      const pad = width === undefined ? 4 : typeof width.value === 'number' ? Math.max(0, width.value) : String(width.value).length;
      return operand.value.length + (countOf(operand.value, '\n', Infinity) + 1) * pad;
    }
    case 'join': {
      const separator = String(arg(0, 'separator')?.value ?? '').length;
      if (typeof operand.value === 'string') return operand.value.length * (1 + separator);
      if (!Array.isArray(operand.value)) return 0;
      const items = operand.value as Value[];
      return items.reduce((sum, item) => sum + textSize(item, 0, limit), 0) + items.length * separator;
    }
    case 'replace':
      return typeof operand.value === 'string' ? replaceBound(operand.value, arg(0, 'old'), arg(1, 'new'), arg(2, 'count')) : 0;
    case 'tojson': {
      const indent = kwargs.get('indent')?.value;
      return textSize(operand, typeof indent === 'number' ? Math.max(0, indent) : 0, limit);
    }
    default:
      return textSize(operand, 0, limit);
  }
}

/** Length of `text` with up to `count` occurrences of `old` replaced by `by`. */
function replaceBound(text: string, old: Value | undefined, by: Value | undefined, count: Value | undefined): number {
  if (typeof old?.value !== 'string' || typeof by?.value !== 'string') return text.length;
  const most = typeof count?.value === 'number' && count.value >= 0 ? count.value : Infinity;
  const grows = Math.max(0, by.value.length - old.value.length);
  const hits = old.value === '' ? Math.min(most, text.length + 1) : countOf(text, old.value, most);
  return text.length + hits * grows;
}

function countOf(text: string, part: string, most: number): number {
  let hits = 0;
  for (let at = text.indexOf(part); at >= 0 && hits < most; at = text.indexOf(part, at + part.length)) hits++;
  return hits;
}

/**
 * Characters `value` takes as text (JSON for lists and objects, as the library writes them,
 * with `indent` spaces per level), or Infinity once past `limit`. Walked with a stack, so lists
 * nested deep or sharing items (a list of itself, twice, thirty times over) cost at most `limit`.
 */
function textSize(value: Value, indent: number, limit: number): number {
  if (typeof value.value === 'string') return value.value.length;
  let total = 0;
  const stack: [Value, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    const pad = indent > 0 ? 1 + indent * (depth + 1) : 0;
    if (typeof v.value === 'string') total += v.value.length + 2;
    else if (Array.isArray(v.value) || v.value instanceof Map) {
      total += 2;
      for (const [key, item] of v.value instanceof Map ? v.value : (v.value as Value[]).entries()) {
        total += 2 + pad + (typeof key === 'string' ? key.length + 4 : 0);
        if (total > limit) return Infinity;
        stack.push([item as Value, depth + 1]);
      }
    } else total += 24;
    if (total > limit) return Infinity;
  }
  return total;
}

/** Steps, depth, time and sizes of one render. */
class Meter {
  private steps = 0;
  private depth = 0;
  private made_ = 0;
  private readonly deadline: number;

  constructor(readonly budget: RenderBudget) {
    this.deadline = performance.now() + budget.ms;
  }

  step(): void {
    if (++this.steps > this.budget.steps) over(`ran past ${this.budget.steps.toLocaleString('en-US')} steps (loop iterations, macro calls, expressions)`);
    // Every step reads the clock (tens of nanoseconds): one step may take milliseconds on a long text.
    if (performance.now() > this.deadline) over(`ran past ${this.budget.ms} ms`);
  }

  enter(): void {
    this.step();
    if (++this.depth > this.budget.depth) over(`nested deeper than ${this.budget.depth} levels (a recursive macro?)`);
  }

  leave(): void {
    this.depth--;
  }

  text(chars: number): void {
    if (chars > this.budget.chars) over(`made a text of more than ${this.budget.chars.toLocaleString('en-US')} characters`);
  }

  items(count: number): void {
    if (!(count <= this.budget.items)) over(`made a list of more than ${this.budget.items.toLocaleString('en-US')} items`);
  }

  bytes(n: number): void {
    this.made_ += n;
    if (this.made_ > this.budget.bytes) over(`made more than ${Math.round(this.budget.bytes / 2 ** 20)} MiB of text and lists`);
  }

  /** Accounts for a value the template made, or (`fresh` false) looked up. */
  made(value: Value, fresh: boolean): void {
    if (typeof value.value === 'string') {
      this.text(value.value.length);
      if (fresh) this.bytes(2 * value.value.length);
    } else if (Array.isArray(value.value)) {
      this.items(value.value.length);
      if (fresh) this.bytes(64 * value.value.length);
    }
  }
}

function over(what: string): never {
  throw new TokenscopeError('model-format', `the model's chat template (tokenizer.chat_template) ${what}`, 'Run without --chat, or use another model file.');
}
