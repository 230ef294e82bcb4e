// ESLint for the pages' scripts (static/js: plain scripts, no build step, each sharing its API
// as a global of the page) and their Node tests (tests/js: CommonJS). `make lint` runs it.
"use strict";

const js = require("@eslint/js");
const globals = require("globals");

// The globals the pages' scripts give one another (each is set by one file, read by others).
const PAGE_MODULES = Object.fromEntries(
  [
    "ReaderAdvance", "ReaderCases", "ReaderClock", "ReaderForm", "ReaderKeys", "ReaderList", "ReaderNotices",
    "ReaderOutbox", "ReaderReceipts", "ReaderStore", "ReaderViewer", "SessionGuard", "ViewerKeys", "ViewerWindow",
  ].map((name) => [name, "readonly"]),
);

const rules = {
  ...js.configs.recommended.rules,
  // `catch (_)` and `(_, i)`: an unused binding the syntax needs says so by its name.
  "no-unused-vars": ["error", { argsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
  eqeqeq: ["error", "smart"],
  "no-var": "error",
  "prefer-const": ["error", { destructuring: "all" }],
  "no-shadow": ["error", { builtinGlobals: false }],
  "no-implicit-globals": "error",
  "no-use-before-define": ["error", { functions: false, classes: false, variables: false }],
};

module.exports = [
  { ignores: ["node_modules/", "staticfiles/", "artifacts/", "var/", ".venv/"] },
  {
    files: ["static/js/**/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "script",
      // `module` only behind the `typeof module` guard that makes a file a CommonJS module in Node.
      globals: { ...globals.browser, ...PAGE_MODULES, module: "readonly" },
    },
    rules,
  },
  {
    files: ["tests/js/**/*.js", "eslint.config.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "commonjs", globals: { ...globals.node } },
    rules,
  },
];
