// ESLint for lib/, sample/, test/, bench/ and scripts/ (npm run lint). typescript-eslint's
// recommended set, plus the rules that catch real bugs with type information: a promise nobody
// awaits (the test setup fails a run on any unhandled rejection), a promise where a callback's
// void is expected, and value imports of types (which load a module at run time for nothing and
// can form import cycles that type imports would not).
import { fileURLToPath } from 'node:url';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const root = fileURLToPath(new URL('../..', import.meta.url));

export default tseslint.config(
  {
    // test/consumers and test/agent-clients are apps of their own, with dependencies installed only
    // when their specs run; the lint tools themselves are not linted.
    basePath: root,
    ignores: [
      'dist/**',
      'coverage/**',
      '**/node_modules/**',
      'tools/**',
      'test/consumers/**',
      'test/agent-clients/**',
      'bench/results/**',
      // Snippet preludes: compiled with every docs snippet by the docs spec, in no tsconfig of their own.
      'docs/preludes/**',
      '**/*.d.mts',
    ],
  },
  {
    basePath: root,
    files: ['**/*.{ts,mts,mjs,js}'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    rules: {
      // Style-only rules of the recommended sets that today's code does not follow on purpose.
      // Nest's metadata API types classes and handlers as `Function`.
      '@typescript-eslint/no-unsafe-function-type': 'off',
      // Where `any` stands (Nest generics, the SDK's untyped shapes), strict mode already guards the rest.
      '@typescript-eslint/no-explicit-any': 'off',
      // The library rewrites low-level errors into messages that say what to fix, and keeps their
      // internals out of what callers see (SECURITY.md), so a `cause` is not always wanted.
      'preserve-caught-error': 'off',
      // Sanitizers match control characters on purpose.
      'no-control-regex': 'off',
      // A definite initial value before branches that each assign is clearer than none.
      'no-useless-assignment': 'off',
      // `_name` marks a parameter or a rest sibling kept for its position or to drop a key.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // A variable a closure reads before its one assignment (a subscription, a server's handle) stays `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // The Standard Schema interface is published as a declared namespace.
      '@typescript-eslint/no-namespace': ['error', { allowDeclarations: true }],
    },
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        structuredClone: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        performance: 'readonly',
        queueMicrotask: 'readonly',
      },
    },
  },
  {
    basePath: root,
    files: ['**/*.{ts,mts}'],
    languageOptions: {
      // With decorator metadata, a class named in a decorated constructor is a value at run time:
      // consistent-type-imports must not turn its import into a type import.
      parserOptions: {
        projectService: true,
        tsconfigRootDir: root,
        emitDecoratorMetadata: true,
        experimentalDecorators: true,
      },
    },
    rules: {
      // node:test's describe/it return promises that the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            {
              from: 'package',
              package: 'node:test',
              name: ['describe', 'it', 'test', 'suite', 'before', 'after', 'beforeEach', 'afterEach'],
            },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      // `import('x').T` stays allowed: it names an optional peer's types without loading it.
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
    },
  },
  {
    // Tests: comma sequences in one-line callbacks, and out-of-range literals fed to fuzzers on purpose.
    basePath: root,
    files: ['test/**', 'lib/**/*.spec.ts', 'bench/**'],
    rules: { '@typescript-eslint/no-unused-expressions': 'off', 'no-loss-of-precision': 'off' },
  },
);
