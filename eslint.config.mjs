// Lint rules. Beyond the recommended sets, house rules with the reason for each.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'lib/generated/', '.tmp/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        Buffer: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        queueMicrotask: 'readonly',
        require: 'readonly',
        module: 'writable',
        __dirname: 'readonly',
        URL: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-require-imports': 'off',
      // A focused test left in would silently skip the rest of the suite.
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='only']",
          message: 'Remove .only before committing.',
        },
      ],
    },
  },
  {
    files: ['lib/**/*.ts'],
    ignores: ['lib/cli/**'],
    rules: {
      // The library logs through grpc-js's logger (lib/trace.ts) so users control the output.
      'no-console': 'error',
      // Environment is read only for defaults, in one place each (bootstrap, tracing).
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message:
            'Read the environment only in lib/bootstrap/load.ts, lib/trace.ts or lib/grpc/environment.ts.',
        },
      ],
      // Small modules that each do one thing.
      'max-lines': ['error', { max: 600, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    files: ['lib/bootstrap/load.ts', 'lib/trace.ts', 'lib/grpc/environment.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    files: ['lib/**/*.ts'],
    rules: {
      // .proto text is compiled at build time (scripts/gen-protos.js), never parsed at import.
      'no-restricted-imports': [
        'error',
        { paths: [{ name: '@grpc/proto-loader', message: 'Use lib/codec.ts.' }] },
      ],
    },
  },
);
