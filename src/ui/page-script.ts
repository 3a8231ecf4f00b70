/**
 * The text the server serves as `/app.js`: the functions of `page/app.ts`, and `pageScript`
 * called once, in a scope of their own.
 *
 * The script is a real TypeScript file, checked against the DOM by its own configuration
 * (`tsconfig.page.json`; the server's code is checked without the DOM). It reaches the
 * browser as JavaScript without a build step of its own: Node loads `page/app.ts` by type
 * stripping (types become blanks), and from the published package `page/app.js`, which
 * `npm run build` emits; either way a function's source text is JavaScript. The import is
 * by a computed URL so that the server's type check does not take in a DOM file.
 *
 * @module
 */

/**
 * The page script's JavaScript, read once per process.
 *
 * @example
 * const script = await pageScriptText(); // "(function () {\n'use strict';\n…\npageScript();\n})();\n"
 */
export function pageScriptText(): Promise<string> {
  loaded ??= load();
  return loaded;
}

let loaded: Promise<string> | undefined;

async function load(): Promise<string> {
  const file = import.meta.url.endsWith('.ts') ? './page/app.ts' : './page/app.js';
  const module = (await import(new URL(file, import.meta.url).href)) as Record<string, unknown>;
  const functions = Object.values(module).filter((value) => typeof value === 'function');
  if (!('pageScript' in module)) throw new Error(`${file} has no pageScript`);
  return `(function () {\n'use strict';\n${functions.map(String).join('\n')}\npageScript();\n})();\n`;
}
