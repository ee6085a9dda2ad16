// `npm run lint`: type-aware typescript-eslint rules and the formatter (dprint through
// @effect/eslint-plugin, configured as the Effect monorepo does and as this code is written:
// two spaces, no semicolons, double quotes, no trailing commas, width 120).
// `npm run lint -- --fix` applies the fixable findings, formatting included.
import effect from "@effect/eslint-plugin"
import tseslint from "typescript-eslint"

export default tseslint.config(
  {
    ignores: [
      "**/node_modules/**",
      "**/dist/**",
      "packages/cli/bundle/**",
      "test/.generated/**",
      "coverage/**",
      "**/*.js",
      "**/*.mjs",
      "**/*.cjs"
    ]
  },
  {
    files: ["**/*.ts"],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: {
        // The packages' own projects for their sources, tsconfig.test.json for tests, bench and configs.
        project: ["./packages/*/tsconfig.json", "./tsconfig.test.json"],
        tsconfigRootDir: import.meta.dirname
      }
    },
    plugins: {
      "@typescript-eslint": tseslint.plugin,
      "@effect": effect
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/await-thenable": "error",
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/consistent-type-imports": ["error", {
        prefer: "type-imports",
        fixStyle: "separate-type-imports",
        disallowTypeAnnotations: false
      }],
      "@typescript-eslint/no-unused-vars": ["error", {
        args: "after-used",
        argsIgnorePattern: "^_",
        varsIgnorePattern: "^_",
        caughtErrors: "none",
        ignoreRestSiblings: true
      }],
      // A package's internal/ modules are its own: others import its public modules.
      "no-restricted-imports": ["error", {
        patterns: [{
          regex: "^@switchyard/[a-z]+/internal/",
          message: "internal/ modules are private to their package; import the public module instead."
        }]
      }],
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 120,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force",
          // Imports stay in the order they were written.
          "module.sortImportDeclarations": "maintain",
          "module.sortExportDeclarations": "maintain",
          "importDeclaration.sortNamedImports": "maintain",
          "exportDeclaration.sortNamedExports": "maintain"
        }
      }]
    }
  }
)
