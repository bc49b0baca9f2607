import { register } from 'node:module';
register('./raw-hooks.mjs', import.meta.url);
