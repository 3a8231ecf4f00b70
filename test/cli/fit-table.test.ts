import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { displayWidth } from '../../src/render/display-width.ts';
import { fitTable, type TableColumn } from '../../src/render/fit-table.ts';
import { wrapLine } from '../../src/render/format-status.ts';

const COLUMNS: TableColumn[] = [
  { header: 'NAME', cut: 6, cutLast: true },
  { header: 'LABEL', cut: 5, comfort: 10 },
  { header: 'STATE' },
  { header: 'SIZE', drop: 0, dropEarly: true },
];
const ROWS = [
  [
    { text: 'a-rather-long-name' },
    { text: '報告書を書く報告書を書く' },
    { text: 'finished' },
    { text: '1 KB' },
  ],
  [{ text: 'b' }, { text: 'e\u0301te\u0301 label' }, { text: 'empty' }, { text: '2 KB' }],
];

describe('fitTable', () => {
  test('no limit: everything whole, nothing said', () => {
    const { lines, narrowed } = fitTable(COLUMNS, ROWS, Number.POSITIVE_INFINITY);
    assert.equal(narrowed, false);
    assert.ok(lines[1]?.includes('報告書を書く報告書を書く'));
    assert.ok(lines[0]?.includes('SIZE'));
  });

  for (const width of [50, 40, 30, 26]) {
    test(`${width} columns: no line wider, and the STATE column starts at one place in every row`, () => {
      const { lines, narrowed } = fitTable(COLUMNS, ROWS, width);
      assert.equal(narrowed, true);
      for (const line of lines)
        assert.ok(displayWidth(line) <= width, `${displayWidth(line)}: ${line}`);
      const starts = lines.map((line, index) => {
        const word = index === 0 ? 'STATE' : index === 1 ? 'finished' : 'empty';
        return displayWidth(line.slice(0, line.indexOf(word)));
      });
      assert.equal(new Set(starts).size, 1, lines.join('\n'));
    });
  }

  test('the droppable column goes before the label is cut below its comfortable width', () => {
    const { lines } = fitTable(COLUMNS, ROWS, 40);
    assert.ok(!lines[0]?.includes('SIZE'), lines.join('\n'));
    assert.match(lines[1] ?? '', /^a-rather-long-name {2}報告書を… {3}finished$/);
  });

  test('the cut-last column is cut only when the others are at their minimum', () => {
    const { lines } = fitTable(COLUMNS, ROWS, 26);
    assert.match(lines[1] ?? '', /^a-rather… {2}報告… {2}finished$/, lines.join('\n'));
  });
});

describe('wrapLine', () => {
  test('wraps at spaces, indents what follows, keeps an over-long word whole', () => {
    assert.deepEqual(wrapLine('aaa bbb ccc', 7), ['aaa bbb', '  ccc']);
    assert.deepEqual(wrapLine('short', 60), ['short']);
    assert.deepEqual(wrapLine('x /a/very/long/path', 5), ['x', '  /a/very/long/path']);
  });
});
