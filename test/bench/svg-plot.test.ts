import assert from 'node:assert/strict';
import { test } from 'node:test';
import { logLogPlot } from '../../bench/svg-plot.ts';

test('the plot is one SVG with a line and a legend entry per series, names escaped', () => {
  const svg = logLogPlot('Cost <per> step', 'step', 'ms', [
    {
      name: 'ours & co',
      colour: '#123456',
      points: [
        { x: 1, y: 2 },
        { x: 1000, y: 3 },
      ],
    },
    {
      name: 'theirs',
      colour: '#654321',
      dashed: true,
      points: [
        { x: 1, y: 5 },
        { x: 1000, y: 80 },
      ],
    },
  ]);
  assert.match(svg, /^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.equal(svg.match(/<polyline /g)?.length, 2);
  assert.ok(svg.includes('Cost &lt;per&gt; step'));
  assert.match(svg, /<title>Cost &lt;per&gt; step: ms against step<\/title>/);
  assert.ok(svg.includes('ours &amp; co'));
  assert.ok(svg.includes('stroke-dasharray'));
  assert.ok(!svg.includes('NaN'));
});

test('points that a log axis cannot show are left out rather than drawn as NaN', () => {
  const svg = logLogPlot('t', 'x', 'y', [
    {
      name: 'a',
      colour: '#000',
      points: [
        { x: 0, y: 1 },
        { x: 10, y: 0 },
        { x: 100, y: 4 },
      ],
    },
  ]);
  assert.ok(!svg.includes('NaN'));
  assert.ok(!svg.includes('Infinity'));
});
