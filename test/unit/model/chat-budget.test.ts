/**
 * Hostile chat templates end within the render budget (chat-budget.ts) with an error that names
 * the template and the limit. Before the budget, the loops ran past 120 s and the allocations
 * aborted Node with "Reached heap limit" at 2.8–4.8 GB (issue 25).
 */
import { describe, expect, it } from 'vitest';
import { RENDER_BUDGET } from '../../../src/model/tokenizer/chat-budget.ts';
import { renderChat, type ChatTemplate } from '../../../src/model/tokenizer/chat.ts';
import { expectTokenscopeError } from './helpers.ts';

const chatOf = (template: string): ChatTemplate => ({ template, bosToken: '<s>', eosToken: '</s>' });
const hi = [{ role: 'user' as const, content: 'hi' }];

/** A string of 2^n characters, made by doubling inside a loop. */
const doubled = (n: number, seed = 'x') => `{% set ns = namespace(s='${seed}') %}{% for i in range(${n}) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}`;
const eightMiB = doubled(23);

/** Which comes first depends on the machine's speed; both end the render within a second. */
const STEPS_OR_TIME = /ran past (300,000 steps|1000 ms)/;

const HOSTILE: [name: string, template: string, limit: RegExp][] = [
  ['nested for loops', '{% for i in range(10000) %}{% for j in range(10000) %}{% for k in range(10000) %}x{% endfor %}{% endfor %}{% endfor %}', STEPS_OR_TIME],
  ['nested empty loops', '{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}', STEPS_OR_TIME],
  ['a wide recursive macro', '{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}', STEPS_OR_TIME],
  ['an endless recursive macro', '{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}', /nested deeper than 400 levels/],
  ['an 8 MB concatenation inside a loop', `${eightMiB}{% for i in range(1000) %}{{ ns.s ~ ns.s }}{% endfor %}`, /text of more than 2,000,000 characters/],
  [
    'a growing text inside a loop',
    `{% set ns = namespace(s='') %}{% for i in range(100000) %}{% set ns.s = ns.s ~ '${'x'.repeat(80)}' %}{% endfor %}`,
    /MiB of text and lists/,
  ],
  ['range(100000000)', '{% for i in range(100000000) %}{% endfor %}', /list of more than 100,000 items/],
  ['range(10000000) nested', '{% for i in range(1000) %}{% set r = range(10000000) %}{% endfor %}', /list of more than 100,000 items/],
  ['a 300 MB indent', "{{ 'a\\nb' | indent(300000000) }}", /text of more than 2,000,000 characters/],
  ['an indent of many lines', `${doubled(20, '\\n')}{{ ns.s | indent(1000) }}`, /text of more than 2,000,000 characters/],
  ['a 268M-character concatenation', `${doubled(28)}{{ ns.s }}`, /text of more than 2,000,000 characters/],
  [
    'replace() growing a text',
    "{% set ns = namespace(s='a') %}{% for i in range(16) %}{% set ns.s = ns.s.replace('a', 'aaaaaaaaaa') %}{% endfor %}",
    /text of more than/,
  ],
  [
    'an aliased replace()',
    "{% set r = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'.replace %}{{ r('a', '" + 'b'.repeat(100_000) + "') }}",
    /text of more than/,
  ],
  [
    'the replace filter growing a text',
    "{% set ns = namespace(s='a') %}{% for i in range(16) %}{% set ns.s = ns.s | replace('a', 'aaaaaaaaaa') %}{% endfor %}",
    /text of more than/,
  ],
  [
    'a list sharing itself, printed',
    "{% set ns = namespace(a=['x']) %}{% for i in range(40) %}{% set ns.a = [ns.a, ns.a] %}{% endfor %}{{ ns.a }}",
    /text of more than/,
  ],
  [
    'a list sharing itself, as JSON',
    "{% set ns = namespace(a=['x']) %}{% for i in range(40) %}{% set ns.a = [ns.a, ns.a] %}{% endfor %}{{ ns.a | tojson }}",
    /text of more than/,
  ],
  [
    'a join with a long separator',
    "{% set ns = namespace(a=['x']) %}{% for i in range(16) %}{% set ns.a = ns.a + ns.a %}{% endfor %}{{ ns.a | join('" + 'y'.repeat(64) + "') }}",
    /text of more than/,
  ],
  ['a template too long to parse quickly', '{{ 1 }}'.repeat(300_000), /has 2,100,000 characters, past the 256,000/],
  ['tojson with a huge indent', '{{ [1, 2, 3] | tojson(indent=300000000) }}', /text of more than/],
];

describe('chat template budget', () => {
  it.each(HOSTILE)('%s ends with a clear error', async (_, template, limit) => {
    const start = performance.now();
    const error = await expectTokenscopeError(() => renderChat(chatOf(template), hi), 'model-format', limit);
    expect(error.message).toMatch(/^the model's chat template \(tokenizer\.chat_template\)/);
    expect(error.hint).toMatch(/without --chat/);
    expect(performance.now() - start).toBeLessThan(5000);
    expect(process.memoryUsage().rss).toBeLessThan(2 ** 30);
  });

  it('a template whose every step is slow stops soon after the time limit', async () => {
    const slow = `${doubled(19)}{% for i in range(100000) %}{% set t = ns.s[::-1] %}{% endfor %}`;
    const start = performance.now();
    await expectTokenscopeError(() => renderChat(chatOf(slow), hi, { ...RENDER_BUDGET, ms: 300 }), 'model-format', /ran past 300 ms|MiB of text/);
    expect(performance.now() - start).toBeLessThan(2000);
  });

  it('a slow template stops at the time limit', async () => {
    const slow = `{% set big = range(100000) %}{% for i in range(100000) %}{{ i in big }}{% endfor %}`;
    const start = performance.now();
    await expectTokenscopeError(() => renderChat(chatOf(slow), hi, { ...RENDER_BUDGET, ms: 200 }), 'model-format', /ran past 200 ms/);
    expect(performance.now() - start).toBeLessThan(2000);
  });

  it('leaves templates within the budget as the library renders them', async () => {
    const template =
      "{% macro turn(m) %}<{{ m.role }}>{{ m.content | trim | replace('x', 'y') }}{% endmacro %}{% for m in messages %}{{ turn(m) }}{% endfor %}" +
      "{{ messages | map(attribute='role') | join(', ') }} {{ {'a': [1, 2]} | tojson(indent=2) }} {{ range(3) | list }}{{ 'a\\nb' | indent(2) }}";
    // (100K words: a loaded machine must not push a normal render past the time limit.)
    const content = 'x '.repeat(100_000);
    const text = await renderChat(chatOf(template), [{ role: 'user', content }]);
    expect(text).toBe(`<user>${'y '.repeat(99_999)}y` + 'user {\n  "a": [\n    1,\n    2\n  ]\n} [0, 1, 2]a\n  b');
  });

  it('keeps a user message that ends a render as text, not as an error', async () => {
    // A message the budget's size check admits (the tokenizer caps prompts at 1M characters).
    const text = await renderChat(chatOf('{{ messages[0].content }}'), [{ role: 'user', content: 'z'.repeat(1_000_000) }]);
    expect(text).toHaveLength(1_000_000);
  });
});
