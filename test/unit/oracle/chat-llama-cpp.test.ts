/**
 * The chat templates the three real vocabularies carry, rendered by our renderer
 * (@huggingface/jinja) and by llama.cpp's Jinja engine: the same prompt text, byte for byte.
 */
import { describe, expect, it } from 'vitest';
import { chatTemplateOf, renderChat, type ChatMessage } from '../../../src/model/tokenizer/chat.ts';
import { hfVocab, type HfVocabName } from '../../oracle/hf-vocab.ts';
import { renderChatTemplate } from '../../oracle/llama-cpp.ts';

const CONVERSATIONS: ChatMessage[][] = [
  [{ role: 'user', content: 'Hi there' }],
  [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'What is 2+2?' },
  ],
  [
    { role: 'user', content: 'Name a colour.' },
    { role: 'assistant', content: 'Blue.' },
    { role: 'user', content: 'Another, with  two spaces\nand a newline.' },
  ],
];

describe.each(['llama3', 'qwen3', 'gemma3'] as HfVocabName[])('%s chat template', (name) => {
  it('renders every conversation as llama.cpp does', async () => {
    const vocab = hfVocab(name);
    const chat = chatTemplateOf(new Map(vocab.metadata), vocab);
    expect(chat).toBeDefined();
    for (const messages of CONVERSATIONS) {
      const want = await renderChatTemplate(chat!.template, { messages, add_generation_prompt: true, bos_token: chat!.bosToken, eos_token: chat!.eosToken });
      expect(await renderChat(chat!, messages)).toBe(want);
    }
  });
});
