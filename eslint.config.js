// ESLint (flat config): the recommended JavaScript and typescript-eslint rules the code meets today.
// Formatting is not ESLint's job here. `npm run lint`.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'dist-*/', 'node_modules/', 'models/cache/', 'test-results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // Node ESM hooks (the CLI's ?raw loader).
  { files: ['**/*.mjs'], languageOptions: { globals: { URL: 'readonly' } } },
  // Validator tests mutate parsed JSON documents, which are untyped on purpose.
  { files: ['test/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  {
    rules: {
      // `_name` marks a value deliberately unused (destructuring it away, an ignored parameter).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
    },
  },
);
