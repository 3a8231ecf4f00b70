import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { displayWidth, fitWidth } from '../../src/render/display-width.ts';
import { quote } from '../../src/render/format-status.ts';
import { terminalSafe, terminalSafeLines } from '../../src/render/terminal-safe.ts';

test('control characters, escape sequences, bidi and invisible characters are shown escaped', () => {
  const cases: [string, string][] = [
    ['\u001b[2J', '\\x1b[2J'],
    [
      '\u001b]8;;https://evil.example/\u0007link\u001b]8;;\u0007',
      '\\x1b]8;;https://evil.example/\\x07link\\x1b]8;;\\x07',
    ],
    ['\u001b]52;c;cHduZWQ=\u001b\\', '\\x1b]52;c;cHduZWQ=\\x1b\\'],
    ['\u001bP+q\u001b\\', '\\x1bP+q\\x1b\\'],
    ['a\rb', 'a\\rb'],
    ['nul\u0000del\u007f', 'nul\\x00del\\x7f'],
    ['\u009b31m\u009d0;t\u009c', '\\x9b31m\\x9d0;t\\x9c'],
    ['\u202eexe.txt', '\\u202eexe.txt'],
    [
      '\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069\u200e\u200f\u061c',
      '\\u202a\\u202b\\u202c\\u202d\\u2066\\u2067\\u2068\\u2069\\u200e\\u200f\\u061c',
    ],
    ['zero\u200bwidth\ufeff\u00ad\u2060', 'zero\\u200bwidth\\ufeff\\xad\\u2060'],
    ['line\u2028para\u2029', 'line\\u2028para\\u2029'],
    ['tag\u{e0041}\u{e007f}', 'tag\\U000e0041\\U000e007f'],
    ['lone \ud800 and \udfff', 'lone \\ud800 and \\udfff'],
    ['filler\u3164\u115f', 'filler\\u3164\\u115f'],
    ['tab\there\nnext', 'tab\\there\\nnext'],
  ];
  for (const [input, shown] of cases)
    assert.equal(terminalSafe(input), shown, JSON.stringify(input));
});

test('ordinary text, emoji sequences and joiners are left alone', () => {
  for (const text of [
    'plain ASCII: a-b_c.d/e \\ f',
    'accents é e\u0301 ñ, 報告書, 한국어, العربية, עברית',
    'family 👨\u200d👩\u200d👧, flag 🇫🇷, keycap 1\ufe0f\u20e3, Persian می\u200cخواهم',
  ]) {
    assert.equal(terminalSafe(text), text);
  }
});

test('text over lines keeps its newlines and tabs, and still escapes a carriage return', () => {
  assert.equal(terminalSafeLines('one\n\ttwo\r\n\u001b[1A'), 'one\n\ttwo\\r\n\\x1b[1A');
});

test('display width: wide and fullwidth 2, combining and zero-width 0, emoji 2', () => {
  const cases: [string, number][] = [
    ['main', 4],
    ['報告書', 6],
    ['ﾊﾝｶｸ', 4],
    ['ＡＢ', 4],
    ['e\u0301te\u0301', 3],
    ['\u200b', 0],
    ['🚀', 2],
    ['👨\u200d👩\u200d👧', 2],
    ['🇫🇷', 2],
    ['©', 1],
    ['©\ufe0f', 2],
    ['한국어', 6],
    ['\u1100\u1161', 2],
  ];
  for (const [text, width] of cases) assert.equal(displayWidth(text), width, JSON.stringify(text));
});

test("quote spells unsafe characters in $'…' so the command is safe to print and to paste", () => {
  assert.equal(quote('runs/a.jsonl'), 'runs/a.jsonl');
  assert.equal(quote("it's.jsonl"), "'it'\\''s.jsonl'");
  assert.equal(quote("a\u001b[2J'\\\u202e.jsonl"), "$'a\\x1b[2J\\'\\\\\\u202e.jsonl'");
  // And a shell reads it back as the very name.
  for (const name of ["a\u001b[2J'\\\u202e.jsonl", 'tab\tnl\n\u{e0041}.jsonl', "it's.jsonl"]) {
    const echoed = execFileSync('bash', ['-c', `printf %s ${quote(name)}`]).toString('utf8');
    assert.equal(echoed, name);
  }
});

test('fitWidth cuts at a grapheme boundary to at most the width, with an ellipsis', () => {
  assert.equal(fitWidth('short', 40), 'short');
  assert.equal(fitWidth('報告書を書く', 7), '報告書…');
  assert.equal(fitWidth('報告書を書く', 12), '報告書を書く');
  assert.equal(fitWidth('e\u0301e\u0301e\u0301e\u0301', 3), 'e\u0301e\u0301…');
  assert.equal(fitWidth('x'.repeat(100_000), 40), `${'x'.repeat(39)}…`);
});
