/**
 * A table made to fit a terminal's width: columns that may be cut (a label, a reason, a run's
 * name) are cut with `…` by display width, the widest first, each down to its minimum; if that
 * is not enough, columns that may be left out are left out, least useful first. Pure.
 *
 * @module
 */
import { displayWidth, fitWidth } from './display-width.ts';

/**
 * One column of a {@link fitTable}.
 *
 * @example
 * const label: TableColumn = { header: 'LABEL', cut: 5 };
 * const size: TableColumn = { header: 'SIZE', drop: 2 };
 */
export interface TableColumn {
  header: string;
  /** When set, the column may be cut down to this many columns (with `…`). */
  cut?: number;
  /** Cut only once the other columns are at their minimum (the column that names the row). */
  cutLast?: boolean;
  /** A width the column keeps while columns marked `dropEarly` can still be left out. */
  comfort?: number;
  /** Left out before any column is cut below its `comfort` width. */
  dropEarly?: boolean;
  /** When set, the column may be left out; lower numbers go first. */
  drop?: number;
}

/**
 * A cell: its plain text (already made safe for a terminal), and how to colour it once fitted.
 *
 * @example
 * const cell: TableCell = { text: 'finished', paint: style.green };
 */
export interface TableCell {
  text: string;
  paint?: (text: string) => string;
}

/**
 * What {@link fitTable} made: the lines, and whether anything was cut or left out (so that
 * the caller can say how to see everything).
 *
 * @example
 * const { lines, narrowed } = fitTable(columns, rows, 60, style.bold);
 */
export interface FittedTable {
  lines: string[];
  narrowed: boolean;
}

const GAP = 2;

/**
 * Lay `rows` out under `columns`, two spaces apart, in at most `width` display columns when it
 * can (`Infinity`: everything whole). Headers are painted with `header`.
 *
 * @example
 * fitTable([{ header: 'RUN', cut: 6 }, { header: 'STATE' }], [[{ text: 'a-very-long-name' }, { text: 'finished' }]], 16);
 * // { lines: ['RUN     STATE', 'a-ver…  finished'], narrowed: true }
 */
export function fitTable(
  columns: TableColumn[],
  rows: TableCell[][],
  width: number,
  header: (text: string) => string = (text) => text,
): FittedTable {
  const natural = columns.map((column, index) =>
    Math.max(
      displayWidth(column.header),
      ...rows.map((row) => displayWidth(row[index]?.text ?? '')),
    ),
  );
  const widths = [...natural];
  const shown = columns.map(() => true);
  const total = (): number =>
    widths.reduce((sum, value, index) => sum + (shown[index] ? value + GAP : 0), 0) - GAP;
  // `comfortable`: a cut column keeps at least its `comfort` width (a first, gentler pass).
  let comfortable = true;
  const minimum = (index: number): number => {
    const column = columns[index] as TableColumn;
    // A column with no comfortable width is not cut at all in the gentle pass.
    const floor = comfortable ? (column.comfort ?? natural[index]) : column.cut;
    return floor === undefined
      ? (natural[index] as number)
      : Math.min(natural[index] as number, Math.max(floor, displayWidth(column.header)));
  };
  const widestCuttable = (last: boolean): number => {
    let widest = -1;
    widths.forEach((value, index) => {
      if (!shown[index] || value <= minimum(index)) return;
      if ((columns[index]?.cutLast === true) !== last) return;
      if (widest === -1 || value > (widths[widest] as number)) widest = index;
    });
    return widest;
  };
  const cutToFit = (): void => {
    while (total() > width) {
      let widest = widestCuttable(false);
      if (widest === -1) widest = widestCuttable(true);
      if (widest === -1) return;
      widths[widest] = Math.max(minimum(widest), (widths[widest] as number) - (total() - width));
    }
  };
  const droppable = columns
    .map((column, index) => ({ index, order: column.drop, early: column.dropEarly === true }))
    .filter(
      (entry): entry is { index: number; order: number; early: boolean } =>
        entry.order !== undefined,
    )
    .sort((left, right) => left.order - right.order);
  /** Leave out the first `count` droppable columns (`early` ones only, when asked) and cut. */
  const attempt = (count: number, earlyOnly: boolean): boolean => {
    shown.fill(true);
    widths.splice(0, widths.length, ...natural);
    for (const { index, early } of droppable.slice(0, count)) {
      if (earlyOnly && !early) return false;
      shown[index] = false;
    }
    cutToFit();
    return total() <= width;
  };
  // First: the least useful columns go before anything is cut below its comfortable width;
  // then, if that is not enough, everything may be cut to its minimum and left out in turn.
  let fits = false;
  for (let count = 0; count <= droppable.length && !fits; count += 1) fits = attempt(count, true);
  comfortable = false;
  for (let count = 0; count <= droppable.length && !fits; count += 1) fits = attempt(count, false);
  const narrowed =
    shown.includes(false) || widths.some((value, index) => value < (natural[index] as number));
  const visible = columns.map((_, index) => index).filter((index) => shown[index]);
  const layout = (cells: TableCell[]): string =>
    visible
      .map((index, position) => {
        const cell = cells[index] ?? { text: '' };
        const text = fitWidth(cell.text, widths[index] as number);
        const painted = cell.paint === undefined ? text : cell.paint(text);
        const last = position === visible.length - 1;
        return last
          ? painted
          : painted + ' '.repeat((widths[index] as number) - displayWidth(text));
      })
      .join(' '.repeat(GAP))
      .trimEnd();
  const headerCells = columns.map((column) => ({ text: column.header, paint: header }));
  return { lines: [layout(headerCells), ...rows.map(layout)], narrowed };
}
