// ESLint (flat config) with typescript-eslint's type-aware rules. Prettier owns formatting
// (.prettierrc.json): no rule here is about layout, so the two never disagree.
//
// Base: `strictTypeChecked`, the superset of `recommendedTypeChecked`. Measured on this code, its
// extra rules find real defects: conditions that can never be true (`no-unnecessary-condition`:
// dead fallbacks, `?.` on values that are never nullish), `undefined`/objects printed into log
// lines and error messages (`restrict-template-expressions`, `no-base-to-string`), values of
// `any` flowing out of JSON.parse unchecked (`no-unsafe-*`), and `return await` missing inside
// try (`return-await`). `stylisticTypeChecked` is not used: its findings here (array-type,
// interface-vs-type, prefer-optional-chain, ...) are churn, not defects, and its
// prefer-nullish-coalescing would turn `process.env.X || default` — where an empty variable
// rightly means "unset" — into a bug.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/**', 'coverage/**', 'node_modules/**', 'state/**', '.nyc_output/**'] },
  js.configs.recommended,
  tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // tsconfig.json covers src, reconcilers, test and bench; the root's JS config files are
        // checked with the default project.
        projectService: { allowDefaultProject: ['*.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Rules beyond the preset, each for a defect this code can have:
      // a new Result kind, state or daemon must reach every switch over it.
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      // Type-only imports vanish from the emitted JS, so a type never drags in a module (and its
      // side effects, or an import cycle) at run time. The code's style: `import { x, type T }`.
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-import-type-side-effects': 'error',
      // `== null` is the one loose comparison worth keeping (null or undefined).
      eqeqeq: ['error', 'always', { null: 'ignore' }],

      // Preset rules tuned, each with why:
      // numbers and booleans print unambiguously in a template; undefined, null, objects and
      // `any` do not, and stay errors.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // tsconfig's noUncheckedIndexedAccess types every `a[i]` as possibly undefined; after a
      // bounds check `a[i]!` is the honest way to say so, and the code uses it hundreds of times.
      '@typescript-eslint/no-non-null-assertion': 'off',
      // An `async` method that implements a Promise-returning interface without awaiting is
      // right: it turns a synchronous throw into a rejection. Dropping `async` to please the
      // rule would change that behaviour. Floating and misused promises are caught elsewhere.
      '@typescript-eslint/require-await': 'off',
      // `() => void`-returning shorthand callbacks (`(l) => process.stderr.write(l)`) are idiom;
      // a void value returned from a block is still reported.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // Passing on a caught value (`.catch((err: unknown) => ... Promise.reject(err))`) is a
      // rethrow, which only-throw-error allows too; a new rejection must still be an Error.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // `while (true)` loops with an inner return/break are deliberate.
      '@typescript-eslint/no-unnecessary-condition': ['error', { allowConstantLoopConditions: true }],
      // A leading underscore names a value kept on purpose (a destructured field dropped from a
      // copy, a parameter an interface requires).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
    },
  },
);
