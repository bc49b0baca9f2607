import { describe, expect, it } from 'vitest';
import { meta } from '../../../src/model/gguf/types.ts';
import { chatTemplateOf, encodeChat } from '../../../src/model/tokenizer/chat.ts';
import { createTokenizer } from '../../../src/model/tokenizer/index.ts';
import { expectTokenscopeError } from './helpers.ts';
import { smallVocab } from '../../oracle/tiny-models.ts';

/** A SentencePiece vocabulary (<s> = 1, </s> = 2, BOS added by default) with a template that writes BOS itself. */
function vocabWith(template: string) {
  const metadata = new Map(smallVocab('gemma3').metadata);
  metadata.set('tokenizer.chat_template', meta.str(template));
  return metadata;
}

describe('chat prompts', () => {
  it('render the file template with its BOS/EOS texts, parse special tokens, and never double BOS', async () => {
    const metadata = vocabWith(
      '{{ bos_token }}{% for m in messages %}{{ m.role }}: {{ m.content }}{{ eos_token }}{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}',
    );
    const tokenizer = createTokenizer(metadata);
    const chat = chatTemplateOf(metadata, tokenizer)!;
    expect({ bos: chat.bosToken, eos: chat.eosToken }).toEqual({ bos: '<s>', eos: '</s>' });
    const ids = await encodeChat(tokenizer, chat, [{ role: 'user', content: 'hi' }]);
    expect(ids.filter((id) => id === tokenizer.bosId)).toHaveLength(1);
    expect(ids[0]).toBe(tokenizer.bosId);
    expect(ids).toContain(tokenizer.eosId); // '</s>' in the text became the EOS token
    expect(tokenizer.decode(ids)).toBe('user: hiassistant:');
  });

  it('a template that does not render is a typed error naming the way out', async () => {
    const metadata = vocabWith("{{ raise_exception('no system role') }}");
    const tokenizer = createTokenizer(metadata);
    await expectTokenscopeError(
      () => encodeChat(tokenizer, chatTemplateOf(metadata, tokenizer)!, [{ role: 'system', content: 'x' }]),
      'model-format',
      /chat template does not render/,
    );
  });
});
