import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { APICallError } from 'ai';
import { z } from 'zod';
import type { RunHandle, ToolDefinition } from '../../src/loop/types.ts';
import type { AgentRegistry } from '../../src/subagents/agent-definition.ts';
import { BACKGROUND_FRAME } from '../../src/subagents/background-frame.ts';
import { Composer, type ComposerEvent } from '../../src/subagents/composer.ts';
import { peek } from '../../src/transcript/peek.ts';
import { isAgentId } from '../../src/transcript/records.ts';
import { Session } from '../../src/transcript/session.ts';
import { latch } from '../support/latch.ts';
import { makeTempFolder, removeFolder, steppingClock } from '../support/transcripts.ts';
import { policyModel, resultsOf, taskOf } from './support/policy-model.ts';
import {
  joinedAnswers,
  messagesOf,
  offeredTools,
  recordsOf,
  spawnedIds,
  transcriptsBelow,
} from './support/tree.ts';

const instant = { sleep: async () => undefined, backoff: () => 0 };

let folder: string;
before(async () => {
  folder = await makeTempFolder('subagents-composer-');
});
after(async () => {
  await removeFolder(folder);
});

/** A model that spawns one child of `childType`, waits for it, and reports its answer. */
function delegatingModel(name: string, childType: string) {
  return policyModel(name, (turns) => {
    const ids = spawnedIds(turns);
    if (resultsOf(turns, 'spawn_agent').length === 0) {
      return {
        calls: [
          {
            name: 'spawn_agent',
            input: {
              agentType: childType,
              task: `help with: ${taskOf(turns)}`,
              label: `${name}'s ${childType}`,
            },
          },
        ],
      };
    }
    const answers = joinedAnswers(turns);
    const waiting = ids.filter((id) => !answers.has(id));
    if (waiting.length > 0) return { calls: [{ name: 'task_wait', input: { agentIds: waiting } }] };
    return {
      text: `${name} reports: ${[...answers.values()].map((item) => item.answer ?? item.reason).join(' | ')}`,
    };
  });
}

function answeringModel(name: string) {
  return policyModel(name, (turns) => ({ text: `${name} answers "${taskOf(turns)}"` }));
}

describe('Composer', () => {
  it('runs a tree of depth 2: transcripts laid out, metas naming parent and call, answers joined, nothing delivered twice', async () => {
    const path = join(folder, 'tree', 'main.jsonl');
    const seenAtStart: string[][] = [];
    let waiting = 0;
    const { promise: bothWaiting, release: releaseHelper } = latch();
    const watchJoins = async (run: RunHandle) => {
      for await (const event of run) {
        if (event.type === 'tool-call-start' && event.toolName === 'task_wait') {
          waiting += 1;
          if (waiting === 2) releaseHelper();
        }
      }
    };
    const helper = policyModel(
      'helper',
      (turns) => ({ text: `helper answers "${taskOf(turns)}"` }),
      async () => {
        // By the time the child's model is first called, its meta and task are on disk.
        const files = await transcriptsBelow(join(folder, 'tree'));
        const mine = files.find((file) => file.includes('helper-'));
        const read = mine === undefined ? null : await peek(join(folder, 'tree', mine));
        seenAtStart.push(read?.ok === true ? read.records.map((record) => record.type) : []);
        // Held until main and the researcher both wait in task_wait: every child then ends
        // while a join waits for it, so nothing may be delivered in the background.
        await bothWaiting;
      },
    );
    const registry: AgentRegistry = {
      main: {
        description: 'plans',
        model: delegatingModel('main', 'researcher'),
        system: 'You are main.',
      },
      researcher: {
        description: 'researches',
        model: delegatingModel('researcher', 'helper'),
        system: 'You research.',
      },
      helper: { description: 'helps', model: helper, system: 'You help.', canSpawn: false },
    };
    const events: ComposerEvent['type'][] = [];
    const composer = new Composer({
      registry,
      loopDefaults: instant,
      clock: steppingClock(),
      onEvent: (event) => {
        events.push(event.type);
        if (event.type === 'child-start' && event.child.agentType === 'researcher') {
          void watchJoins(event.run);
        }
      },
    });
    const started = await composer.start({ path, agentType: 'main', task: 'find the answer' });
    void watchJoins(started.run);
    const result = await started.run;
    await composer.idle();

    assert.equal(result.status, 'finished');
    assert.equal(
      result.text,
      'main reports: researcher reports: helper answers "help with: help with: find the answer"',
    );
    const files = await transcriptsBelow(join(folder, 'tree'));
    assert.equal(files.length, 3);
    const researcherFile = files.find((file) =>
      /^main\.agents\/researcher-[^/]+\.jsonl$/.test(file),
    );
    const helperFile = files.find((file) =>
      /^main\.agents\/researcher-[^/]+\.agents\/helper-[^/]+\.jsonl$/.test(file),
    );
    assert.ok(researcherFile !== undefined && helperFile !== undefined, files.join(', '));

    const mainRecords = await recordsOf(path);
    const spawnCall = mainRecords
      .flatMap((record) => (record.type === 'message' ? record.content : []))
      .find((part) => part.type === 'tool-call' && part.toolName === 'spawn_agent');
    assert.ok(spawnCall?.type === 'tool-call');
    const researcherRecords = await recordsOf(join(folder, 'tree', researcherFile));
    const meta = researcherRecords[0];
    assert.ok(meta?.type === 'session-meta');
    assert.deepEqual(meta.parent, { transcript: '../main.jsonl', callId: spawnCall.callId });
    assert.equal(meta.agentType, 'researcher');
    assert.equal(meta.label, "main's researcher");
    assert.ok(isAgentId(meta.agentId) && researcherFile.endsWith(`/${meta.agentId}.jsonl`));
    const task = researcherRecords[1];
    assert.ok(task?.type === 'message' && task.role === 'user');
    assert.deepEqual(task.content, [{ type: 'text', text: 'help with: find the answer' }]);
    const helperMeta = (await recordsOf(join(folder, 'tree', helperFile)))[0];
    assert.ok(helperMeta?.type === 'session-meta');
    assert.equal(helperMeta.parent?.transcript, `../${meta.agentId}.jsonl`);
    assert.deepEqual(seenAtStart, [['session-meta', 'message']]);

    const join_ = mainRecords.find(
      (record) => record.type === 'tool-dispatched' && record.toolName === 'task_wait',
    );
    assert.ok(join_?.type === 'tool-dispatched');
    assert.deepEqual(join_.joins, [meta.agentId]);
    assert.equal(join_.idempotency, 'read-only');
    const spawnDispatch = mainRecords.find(
      (record) => record.type === 'tool-dispatched' && record.toolName === 'spawn_agent',
    );
    assert.ok(
      spawnDispatch?.type === 'tool-dispatched' && spawnDispatch.idempotency === 'side-effect',
    );
    for (const file of [path, join(folder, 'tree', researcherFile)]) {
      const background = (await messagesOf(file)).filter(
        (message) => message.extras?.injected === 'background',
      );
      assert.deepEqual(background, [], `${file}: a joined child was delivered again`);
    }
    assert.deepEqual(offeredTools(helper), [], 'a canSpawn: false type gets no spawn tools');
    assert.deepEqual(events.sort(), ['child-end', 'child-end', 'child-start', 'child-start']);
  });

  it('delivers a child that ends while nobody waits as a background turn, at a safe point, once', async () => {
    const path = join(folder, 'background', 'main.jsonl');
    const { promise: ended, release: childEnded } = latch();
    const { promise: workerGate, release: releaseWorker } = latch();
    const pause: ToolDefinition<Record<string, never>> = {
      name: 'pause',
      description: 'wait a moment',
      inputSchema: z.object({}),
      idempotency: 'read-only',
      execute: async () => {
        // The worker ends only now, while main is inside this call: nobody is waiting for it.
        releaseWorker();
        await ended;
        return 'paused';
      },
    };
    const main = policyModel('main', (turns) => {
      if (resultsOf(turns, 'spawn_agent').length === 0)
        return { calls: [{ name: 'spawn_agent', input: { agentType: 'worker', task: 'work' } }] };
      if (resultsOf(turns, 'pause').length === 0) return { calls: [{ name: 'pause', input: {} }] };
      const delivered = turns.filter(
        (turn) => turn.role === 'user' && turn.text.startsWith(BACKGROUND_FRAME),
      );
      return {
        text: `main heard ${delivered.length}: ${delivered.map((turn) => turn.text.split('\n\n')[1]).join()}`,
      };
    });
    const registry: AgentRegistry = {
      main: {
        description: 'plans',
        model: main,
        system: 'main',
        tools: [pause],
      },
      worker: {
        description: 'works',
        model: policyModel(
          'worker',
          (turns) => ({ text: `worker answers "${taskOf(turns)}"` }),
          () => workerGate,
        ),
        system: 'work',
      },
    };
    const composer = new Composer({
      registry,
      loopDefaults: instant,
      onEvent: (event) => event.type === 'child-end' && childEnded(),
    });
    const { run } = await composer.start({ path, agentType: 'main', task: 'go' });
    const result = await run;
    await composer.idle();

    assert.equal(result.text, 'main heard 1: worker answers "work"');
    const messages = await messagesOf(path);
    const index = messages.findIndex((message) => message.extras?.injected === 'background');
    const delivery = messages[index];
    assert.ok(delivery !== undefined && delivery.role === 'user');
    const text = delivery.content[0]?.type === 'text' ? delivery.content[0].text : '';
    assert.ok(text.startsWith(`${BACKGROUND_FRAME} The child agent worker-`), text);
    assert.match(String(delivery.extras?.agentId), /^worker-/);
    // The turn before it is the pause tool's result: the delivery waited for the call to be answered.
    const before_ = messages[index - 1];
    assert.ok(
      before_?.role === 'tool' &&
        before_.content[0]?.type === 'tool-result' &&
        before_.content[0].toolName === 'pause',
    );
  });

  it('a join with a timeout names the children still running; the next join gets the answer and nothing is delivered', async () => {
    const path = join(folder, 'timeout', 'main.jsonl');
    const { promise: gate, release } = latch();
    const worker = policyModel(
      'worker',
      () => ({ text: 'slow answer' }),
      () => gate,
    );
    const main = policyModel('main', (turns) => {
      const ids = spawnedIds(turns);
      const waits = resultsOf(turns, 'task_wait');
      if (ids.length === 0)
        return {
          calls: [{ name: 'spawn_agent', input: { agentType: 'worker', task: 'slow work' } }],
        };
      if (waits.length === 0)
        return { calls: [{ name: 'task_wait', input: { agentIds: ids, timeoutSeconds: 5 } }] };
      if (waits.length === 1) {
        release();
        return { calls: [{ name: 'task_wait', input: { agentIds: ids } }] };
      }
      return { text: JSON.stringify(waits.map((wait) => wait.output)) };
    });
    const registry: AgentRegistry = {
      main: { description: 'plans', model: main, system: 'main' },
      worker: { description: 'works', model: worker, system: 'work' },
    };
    // The timer fires at once: the child is held by its gate, so it is certainly still running.
    const composer = new Composer({
      registry,
      loopDefaults: instant,
      sleep: async () => undefined,
    });
    const { run } = await composer.start({ path, agentType: 'main', task: 'go' });
    const result = await run;
    await composer.idle();

    const outputs = JSON.parse(result.text) as {
      results: { agentId: string; status: string; answer?: string }[];
      stillRunning?: string[];
    }[];
    assert.equal(outputs.length, 2);
    const [first, second] = outputs;
    assert.deepEqual(first?.results, []);
    assert.equal(first?.stillRunning?.length, 1);
    assert.match(first?.stillRunning?.[0] ?? '', /^worker-/);
    assert.deepEqual(second?.results, [
      { agentId: first?.stillRunning?.[0], status: 'finished', answer: 'slow answer' },
    ]);
    const background = (await messagesOf(path)).filter(
      (message) => message.extras?.injected === 'background',
    );
    assert.deepEqual(background, []);
  });

  it('refuses spawns past maxConcurrent as error results, and offers no spawn tools at maxDepth', async () => {
    const path = join(folder, 'limits', 'main.jsonl');
    const { promise: gate, release } = latch();
    const worker = policyModel(
      'worker',
      () => ({ text: 'done' }),
      () => gate,
    );
    const main = policyModel('main', (turns) => {
      const spawns = resultsOf(turns, 'spawn_agent');
      if (spawns.length === 0) {
        return {
          calls: [1, 2, 3].map((n) => ({
            name: 'spawn_agent',
            input: { agentType: 'worker', task: `part ${n}` },
          })),
        };
      }
      if (resultsOf(turns, 'task_wait').length === 0) {
        release();
        return { calls: [{ name: 'task_wait', input: { agentIds: spawnedIds(turns) } }] };
      }
      return { text: JSON.stringify(spawns.map((spawn) => spawn.isError)) };
    });
    const registry: AgentRegistry = {
      main: { description: 'plans', model: main, system: 'main' },
      worker: { description: 'works', model: worker, system: 'work' },
    };
    const composer = new Composer({
      registry,
      loopDefaults: instant,
      limits: { maxConcurrent: 2, maxDepth: 1 },
    });
    const { run } = await composer.start({ path, agentType: 'main', task: 'go' });
    const result = await run;
    await composer.idle();

    const errors = JSON.parse(result.text) as boolean[];
    assert.deepEqual([...errors].sort(), [false, false, true]);
    const refusal = resultsOf(
      (await messagesOf(path)).map((message) => ({
        role: message.role,
        text: '',
        calls: [],
        results: message.content.flatMap((part) =>
          part.type === 'tool-result'
            ? [{ id: part.callId, name: part.toolName, output: part.output, isError: part.isError }]
            : [],
        ),
      })),
      'spawn_agent',
    ).find((item) => item.isError);
    assert.match(String(refusal?.output), /2 children are already running/);
    assert.equal(
      (await readdir(join(folder, 'limits', 'main.agents'))).filter((name) =>
        name.endsWith('.jsonl'),
      ).length,
      2,
    );
    assert.ok(offeredTools(main).includes('spawn_agent'));
    assert.deepEqual(offeredTools(worker), [], 'a child at maxDepth is offered no spawn tools');
  });

  it("a child's failure, an unknown type and an unsafe id are results the parent reads; the parent finishes", async () => {
    const path = join(folder, 'failures', 'main.jsonl');
    const broken = policyModel('broken', () => {
      throw new APICallError({
        message: 'down',
        url: 'http://127.0.0.1/x',
        requestBodyValues: {},
        statusCode: 503,
        isRetryable: true,
      });
    });
    const main = policyModel('main', (turns) => {
      const spawns = resultsOf(turns, 'spawn_agent');
      if (spawns.length === 0) {
        return {
          calls: [
            { name: 'spawn_agent', input: { agentType: 'broken', task: 'fail' } },
            { name: 'spawn_agent', input: { agentType: 'nonexistent', task: 'x' } },
          ],
        };
      }
      if (resultsOf(turns, 'task_wait').length === 0) {
        return {
          calls: [
            {
              name: 'task_wait',
              input: { agentIds: [...spawnedIds(turns), '../../etc/passwd', 'nobody-here'] },
            },
          ],
        };
      }
      return { text: JSON.stringify({ spawns, waits: resultsOf(turns, 'task_wait') }) };
    });
    const registry: AgentRegistry = {
      main: { description: 'plans', model: main, system: 'main' },
      broken: { description: 'fails', model: broken, system: 'x' },
    };
    const composer = new Composer({ registry, loopDefaults: instant });
    const { run } = await composer.start({ path, agentType: 'main', task: 'go' });
    const result = await run;
    await composer.idle();

    assert.equal(result.status, 'finished');
    const seen = JSON.parse(result.text) as {
      spawns: { isError: boolean; output: unknown }[];
      waits: {
        isError: boolean;
        output: { results: { agentId: string; status: string; reason: string; detail: string }[] };
      }[];
    };
    assert.equal(seen.spawns.filter((spawn) => spawn.isError).length, 1);
    assert.match(
      String(seen.spawns.find((spawn) => spawn.isError)?.output),
      /Unknown agent type "nonexistent"/,
    );
    const wait = seen.waits[0];
    assert.equal(wait?.isError, true);
    const byId = new Map(wait?.output.results.map((item) => [item.agentId, item]));
    const brokenId = [...byId.keys()].find((id) => id.startsWith('broken-')) ?? '';
    assert.equal(byId.get(brokenId)?.status, 'failed');
    assert.equal(byId.get(brokenId)?.reason, 'failed');
    assert.equal(byId.get('../../etc/passwd')?.reason, 'unknown-agent');
    assert.equal(byId.get('nobody-here')?.reason, 'missing');
  });

  it('never turns an unsafe injected id into a path', async () => {
    const path = join(folder, 'unsafe', 'main.jsonl');
    const main = policyModel('main', (turns) =>
      resultsOf(turns, 'spawn_agent').length === 0
        ? { calls: [{ name: 'spawn_agent', input: { agentType: 'worker', task: 'x' } }] }
        : { text: JSON.stringify(resultsOf(turns, 'spawn_agent')[0]) },
    );
    const registry: AgentRegistry = {
      main: { description: 'plans', model: main, system: 'main' },
      worker: { description: 'works', model: answeringModel('worker'), system: 'work' },
    };
    const composer = new Composer({ registry, loopDefaults: instant, ids: () => '../escape' });
    const { run } = await composer.start({ path, agentType: 'main', task: 'go' });
    const result = await run;
    const seen = JSON.parse(result.text) as { isError: boolean; output: string };
    assert.equal(seen.isError, true);
    assert.match(seen.output, /not safe as a file name/);
    assert.deepEqual(
      await transcriptsBelow(folder).then((files) =>
        files.filter((file) => file.includes('escape')),
      ),
      [],
    );
  });

  it('a spawn call whose child transcript already exists gets that same child, never a second run', async () => {
    const path = join(folder, 'existing', 'main.jsonl');
    const existing = await Session.create(
      join(folder, 'existing', 'main.agents', 'worker-fixed.jsonl'),
      {
        agentId: 'worker-fixed',
        agentType: 'worker',
        label: 'worker',
        model: 'policy:worker',
        parent: { transcript: '../main.jsonl', callId: 'lost-call' },
      },
    );
    await existing.appendDurable({
      type: 'message',
      role: 'user',
      content: [{ type: 'text', text: 'x' }],
    });
    await existing.appendDurable({
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: 'answered before the crash' }],
    });
    await existing.close();
    const worker = answeringModel('worker');
    const registry: AgentRegistry = {
      main: { description: 'plans', model: delegatingModel('main', 'worker'), system: 'main' },
      worker: { description: 'works', model: worker, system: 'work' },
    };
    const composer = new Composer({ registry, loopDefaults: instant, ids: () => 'worker-fixed' });
    const { run } = await composer.start({ path, agentType: 'main', task: 'go' });
    const result = await run;
    await composer.idle();

    const spawn = (await messagesOf(path))
      .flatMap((message) => message.content)
      .find((part) => part.type === 'tool-result' && part.toolName === 'spawn_agent');
    assert.ok(spawn?.type === 'tool-result');
    assert.equal((spawn.output as { status: string }).status, 'already-started');
    assert.equal(worker.doStreamCalls.length, 0, 'no second run of the child');
    assert.equal(result.text, 'main reports: answered before the crash');
  });
});
