import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import type { LanguageModelV4CallOptions, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import fc from 'fast-check';
import { EXIT } from '../../src/render/exit-codes.ts';
import {
  formatBytes,
  reasonOf,
  statusExitCode,
  summarize,
  table,
} from '../../src/render/format-status.ts';
import { main } from '../../src/cli/main.ts';
import { planTreeRevival } from '../../src/runs/tree-revival-plan.ts';
import { buildTree } from '../../src/runs/inspect-tree.ts';
import type { RunNode } from '../../src/render/run-node.ts';
import { colourEnabled, createStyle, stripColour } from '../../src/render/terminal-style.ts';
import {
  demoScript,
  sectionContent,
  WRITER_MARKER,
  writerTask,
} from '../../src/demo/demo-script.ts';
import { createPromptModel, type ScriptPrompt } from '../../src/demo/prompt-model.ts';
import type { Inspection } from '../../src/revival/index.ts';
import { INTERRUPTED_MESSAGE } from '../../src/revival/index.ts';
import { fixtureFolder } from './support/fixture-folder.ts';

function inspection(path: string, fields: Partial<Inspection>): Inspection {
  return {
    path,
    revivable: false,
    revivalsUsed: 0,
    maxRevivals: 3,
    openDispatches: [],
    neverDispatched: [],
    pendingJoins: [],
    bytes: 100,
    messages: 2,
    estimatedTokens: 25,
    ...fields,
  } as Inspection;
}

function tree(entries: [string, Partial<Inspection>][]): RunNode[] {
  return buildTree(
    entries.map(([path, fields]) => ({ path, inspection: inspection(path, fields) })),
    '/runs',
  );
}

describe('the status tree and its words', () => {
  test('children hang under their parent by layout, sorted by path', () => {
    const roots = tree([
      ['/runs/b.jsonl', { reason: 'finished' }],
      ['/runs/a.agents/y.jsonl', { reason: 'finished', agentId: 'y' }],
      ['/runs/a.jsonl', { revivable: true, agentId: 'a' }],
      ['/runs/a.agents/x.jsonl', { reason: 'revival-cap', agentId: 'x' }],
      ['/runs/a.agents/x.agents/z.jsonl', { reason: 'unreadable' }],
    ]);
    assert.deepEqual(
      roots.map((root) => [
        root.displayPath,
        root.state,
        root.children.map((child) => child.state),
      ]),
      [
        ['a.jsonl', 'revivable', ['capped', 'finished']],
        ['b.jsonl', 'finished', []],
      ],
    );
    assert.equal(roots[0]?.children[0]?.children[0]?.state, 'unreadable');
    const summary = summarize(roots);
    assert.deepEqual([summary.total, summary.revivable, summary.resumeTokens], [5, 1, 25]);
    assert.equal(statusExitCode(summary), EXIT.unreadable);
  });

  test('exit codes: unreadable before revivable before capped', () => {
    const exit = (states: Partial<Inspection>[]) =>
      statusExitCode(
        summarize(tree(states.map((fields, index) => [`/runs/r${index}.jsonl`, fields]))),
      );
    assert.equal(exit([{ reason: 'finished' }, { reason: 'running' }, { reason: 'empty' }]), 0);
    assert.equal(exit([{ reason: 'revival-cap' }]), 5);
    assert.equal(exit([{ reason: 'revival-cap' }, { revivable: true }]), 3);
    assert.equal(exit([{ reason: 'unreadable' }, { revivable: true }]), 4);
  });

  test('a revivable run says what is open', () => {
    const [node] = tree([
      [
        '/runs/a.jsonl',
        {
          revivable: true,
          openDispatches: [
            {
              callId: 'c1',
              toolName: 'write_file',
              idempotency: 'side-effect',
              seq: 3,
              turnSeq: 2,
            },
            {
              callId: 'c2',
              toolName: 'read_file',
              idempotency: 'read-only',
              seq: 4,
              turnSeq: 2,
              resultSeq: 6,
            },
            { callId: 'j', toolName: 'task_wait', idempotency: 'read-only', seq: 5, turnSeq: 2 },
          ],
          neverDispatched: [{ callId: 'c3', toolName: 'list_files' }],
          pendingJoins: [{ callId: 'j', agentIds: ['x', 'y'] }],
        },
      ],
    ]);
    assert.equal(
      reasonOf(node as RunNode),
      '1 call in flight, 1 result written, not settled, 1 call not started, waiting on 2 children',
    );
    const [quiet] = tree([['/runs/b.jsonl', { revivable: true, tail: 'results-unread' }]]);
    assert.equal(reasonOf(quiet as RunNode), 'results not yet read');
  });

  test('tables align on what is visible, colour or not', () => {
    const style = createStyle(true);
    const lines = table([
      [style.red('ab'), 'c'],
      ['abcd', 'e'],
    ]);
    assert.deepEqual(lines.map(stripColour), ['ab    c', 'abcd  e']);
    assert.deepEqual([0, 1023, 1024, 4300, 5 * 1024 ** 3].map(formatBytes), [
      '0 B',
      '1023 B',
      '1.0 KB',
      '4.2 KB',
      '5.0 GB',
    ]);
  });

  test('colour: a terminal or FORCE_COLOR turns it on, NO_COLOR or FORCE_COLOR=0 always off', () => {
    assert.equal(colourEnabled({}, true), true);
    assert.equal(colourEnabled({}, false), false);
    assert.equal(colourEnabled({ TERM: 'dumb' }, true), false);
    assert.equal(colourEnabled({ FORCE_COLOR: '1' }, false), true);
    assert.equal(colourEnabled({ FORCE_COLOR: '0' }, true), false);
    assert.equal(colourEnabled({ FORCE_COLOR: '0' }, false), false);
    assert.equal(colourEnabled({ NO_COLOR: '1' }, true), false);
    assert.equal(colourEnabled({ NO_COLOR: '1', FORCE_COLOR: '1' }, true), false);
    assert.equal(colourEnabled({ NO_COLOR: '' }, true), true);
    assert.equal(createStyle(false).red('x'), 'x');
  });
});

describe('the revival plan', () => {
  test('children first; capped and unreadable runs left alone; a live tree untouched', () => {
    const plan = planTreeRevival(
      tree([
        [
          '/runs/a.jsonl',
          { revivable: true, agentId: 'a', agentType: 'main', estimatedTokens: 10 },
        ],
        [
          '/runs/a.agents/x.jsonl',
          { revivable: true, agentId: 'x', agentType: 'worker', estimatedTokens: 5 },
        ],
        ['/runs/a.agents/x.agents/z.jsonl', { revivable: true, agentId: 'z', agentType: 'worker' }],
        ['/runs/a.agents/y.jsonl', { reason: 'revival-cap', agentId: 'y' }],
        ['/runs/b.jsonl', { revivable: true, agentId: 'b' }],
        ['/runs/b.agents/w.jsonl', { reason: 'running', agentId: 'w' }],
      ]),
    );
    assert.deepEqual(
      plan.revivals.map((revival) => revival.node.inspection.agentId),
      ['z', 'x', 'a'],
    );
    assert.deepEqual(plan.agentTypes, ['worker', 'main']);
    assert.equal(plan.estimatedTokens, 40);
    assert.deepEqual(
      plan.leftAlone.map((left) => left.node.inspection.agentId),
      ['y'],
    );
    assert.match(plan.leftAlone[0]?.why ?? '', /revival cap \(0\/3\)/);
    assert.deepEqual(
      plan.blocked.map((blocked) => [blocked.node.inspection.agentId, blocked.why]),
      [['b', 'w is running in a live process; this tree is left alone']],
    );
  });
});

describe('the scripted model', () => {
  const prompt = (turns: LanguageModelV4CallOptions['prompt']): LanguageModelV4CallOptions => ({
    prompt: turns,
  });
  const writer = (extra: LanguageModelV4CallOptions['prompt'] = []) =>
    prompt([
      { role: 'system', content: WRITER_MARKER },
      { role: 'user', content: [{ type: 'text', text: writerTask('s.md', 'Why runs die') }] },
      ...extra,
    ]);

  test('its answers, call ids included, are a function of the prompt', async () => {
    const model = createPromptModel({ script: demoScript });
    const first = await model.doGenerate(writer());
    const second = await createPromptModel({ script: demoScript }).doGenerate(writer());
    assert.deepEqual(first.content, second.content);
    const call = first.content.find((part) => part.type === 'tool-call');
    assert.ok(call?.type === 'tool-call');
    assert.equal(call.toolName, 'write_file');
    assert.deepEqual(JSON.parse(call.input), {
      path: 's.md',
      content: sectionContent('Why runs die'),
    });
    assert.equal(first.finishReason.unified, 'tool-calls');
    const streamed: LanguageModelV4StreamPart[] = [];
    const { stream } = await model.doStream(writer());
    for await (const part of stream) streamed.push(part);
    assert.deepEqual(
      streamed.filter((part) => part.type === 'tool-call'),
      [call],
    );
    assert.equal(streamed.at(-1)?.type, 'finish');
  });

  test('a writer told its write was interrupted reads the file, then decides from what it finds', () => {
    const script = (turns: ScriptPrompt['turns']): ReturnType<typeof demoScript> =>
      demoScript({ system: WRITER_MARKER, toolNames: [], turns });
    const task = {
      role: 'user' as const,
      text: writerTask('s.md', 'Why runs die'),
      toolCalls: [],
      toolResults: [],
    };
    const call = {
      role: 'assistant' as const,
      text: '',
      toolCalls: [{ callId: 'c1', toolName: 'write_file', input: {} }],
      toolResults: [],
    };
    const answered = (toolName: string, output: unknown, isError = false) => ({
      role: 'tool' as const,
      text: '',
      toolCalls: [],
      toolResults: [{ callId: 'c1', toolName, output, isError }],
    });
    const notice = {
      role: 'user' as const,
      text: '[background event] resumed',
      toolCalls: [],
      toolResults: [],
    };
    const interrupted = [task, call, answered('write_file', INTERRUPTED_MESSAGE, true), notice];
    assert.deepEqual(script(interrupted).toolCalls, [
      { toolName: 'read_file', input: { path: 's.md' } },
    ]);
    const whole = sectionContent('Why runs die');
    const half = whole.slice(0, 100);
    const afterRead = (content: string) => [
      ...interrupted,
      { ...call, toolCalls: [{ callId: 'c2', toolName: 'read_file', input: {} }] },
      answered('read_file', { path: 's.md', bytes: content.length, content }),
    ];
    assert.deepEqual(script(afterRead(half)).toolCalls, [
      { toolName: 'write_file', input: { path: 's.md', content: whole } },
    ]);
    const complete = script(afterRead(whole));
    assert.equal(complete.toolCalls, undefined);
    assert.match(complete.text ?? '', /complete .*nothing to redo/);
  });
});

describe('main never throws', () => {
  const fixture = fixtureFolder();

  test('any arguments to status and show: an exit code, and a mistake is one line', async () => {
    const seed = Number(process.env.SEED ?? Date.now());
    console.log('seed', seed);
    const word = fc.oneof(
      fc.constantFrom(
        'runs',
        'other',
        'runs/main.jsonl',
        'other/broken.jsonl',
        '--json',
        '--envelopes',
        '--max-revivals',
        '-1',
        '7',
        '--',
        '-x',
        '',
        '/dev/null',
        '.',
      ),
      fc.string({ maxLength: 12 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('status', 'show'),
        fc.array(word, { maxLength: 5 }),
        async (command, words) => {
          const stdout = new PassThrough();
          const stderr = new PassThrough();
          let errors = '';
          stdout.resume();
          stderr.on('data', (chunk: Buffer) => {
            errors += chunk.toString();
          });
          const code = await main([command, ...words], {
            stdin: Object.assign(new PassThrough(), { isTTY: false }),
            stdout,
            stderr,
            env: {},
            cwd: fixture.path,
            out: createStyle(false),
            err: createStyle(false),
          });
          assert.ok((Object.values(EXIT) as number[]).includes(code), `exit ${code}`);
          if (code === EXIT.usage || code === EXIT.failure) {
            assert.equal(errors.split('\n').length, 2, errors);
            assert.doesNotMatch(errors, /internal error/);
          }
        },
      ),
      { seed, numRuns: 60 },
    );
  });
});
