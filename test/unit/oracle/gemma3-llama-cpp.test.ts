/** gemma3: token ids, logits and greedy tokens of our CPU reference against llama.cpp on tiny real-vocabulary files. */
import { describeAgainstLlamaCpp } from '../../oracle/arch-suite.ts';

describeAgainstLlamaCpp('gemma3', { types: ['F32', 'F16'], steps: 16, maxNmse: { F32: 1e-5, F16: 1e-5 } });
