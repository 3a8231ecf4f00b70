import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { AgentRegistry } from '../../src/subagents/agent-definition.ts';
import type { AgentIdFactory } from '../../src/subagents/agent-id.ts';
import { createChildSession } from '../../src/subagents/child-session.ts';
import { Composer } from '../../src/subagents/composer.ts';
import { planSpawn } from '../../src/subagents/plan-spawn.ts';
import { filePlaces } from '../../src/subagents/run-places.ts';
import type { FileSystemOperation } from '../../src/testing/faulty-file-system.ts';
import { FaultyFileSystem } from '../../src/testing/index.ts';
import { nodeFileSystem } from '../../src/transcript/file-system.ts';
import { isAgentId } from '../../src/transcript/records.ts';
import { makeTempFolder, removeFolder } from '../support/transcripts.ts';
import { policyModel, resultsOf } from './support/policy-model.ts';
import { recordsOf } from './support/tree.ts';

const seed = Number(process.env.SEED ?? Date.now());
console.log('seed', seed);

let folder: string;
before(async () => {
  folder = await makeTempFolder('subagents-failures-');
});
after(async () => {
  await removeFolder(folder);
});

describe('planSpawn', () => {
  it('never throws, and only plans safe ids for registered types', () => {
    const idMaker = fc.oneof(
      fc.constant<AgentIdFactory>(({ agentType, callId }) => `${agentType}-${callId}`),
      fc.string().map(
        (id): AgentIdFactory =>
          () =>
            id,
      ),
      fc.constant((() => {
        throw new Error('no ids today');
      }) as AgentIdFactory),
      fc.constant((() => 42) as unknown as AgentIdFactory),
    );
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 12 }), { maxLength: 4 }),
        fc.string({ maxLength: 12 }),
        fc.string({ maxLength: 40 }),
        fc.option(fc.string({ maxLength: 20 }), { nil: undefined }),
        idMaker,
        fc.nat(4),
        fc.nat(4),
        (types, agentType, callId, label, ids, maxDepth, parentDepth) => {
          const registry: AgentRegistry = {};
          for (const type of types)
            registry[type] = { description: type, model: 'openai:x', system: '' };
          const plan = planSpawn({
            registry,
            ids,
            maxDepth,
            parentDepth,
            parentAgentId: 'main',
            callId,
            input: { agentType, label },
          });
          if (plan.ok) {
            assert.ok(isAgentId(plan.agentId), plan.agentId);
            assert.ok(Object.hasOwn(registry, agentType));
            assert.ok(parentDepth < maxDepth);
          } else {
            assert.ok(plan.refusal.length > 0);
          }
        },
      ),
      { seed, numRuns: 1000 },
    );
  });
});

describe('createChildSession under file-system faults', () => {
  it('never throws: either the child exists with its meta and task, or nothing holds its lock', async () => {
    const operations: FileSystemOperation[] = [
      'makeFolder',
      'syncFolder',
      'open',
      'write',
      'sync',
      'tryLock',
    ];
    let failures = 0;
    let round = 0;
    for (const operation of operations) {
      for (const nth of [1, 2, 3]) {
        round += 1;
        const parentPath = join(folder, `faults-${round}`, 'main.jsonl');
        const sessionPath = join(folder, `faults-${round}`, 'main.agents', 'worker-1.jsonl');
        const fileSystem = new FaultyFileSystem(nodeFileSystem, {
          rules: [{ operation, nth, fault: { kind: 'error', code: 'EIO' } }],
        });
        const created = await createChildSession({
          child: {
            agentId: 'worker-1',
            agentType: 'worker',
            label: 'w',
            callId: 'call_1',
            sessionPath,
          },
          parentPath,
          model: 'policy:worker',
          task: 'do it',
          places: filePlaces({ fileSystem }),
        });
        if (created.ok) {
          const faultsBefore = fileSystem.fired.length;
          await created.writer.close();
          const types = (await recordsOf(sessionPath)).map((record) => record.type);
          // What createChildSession wrote, then the closing checkpoint — unless the fault hit
          // the close itself (which never throws for that).
          const closingFailed = fileSystem.fired.length > faultsBefore;
          assert.deepEqual(
            types,
            closingFailed && operation === 'write'
              ? ['session-meta', 'message']
              : ['session-meta', 'message', 'checkpoint'],
            `${operation} #${nth}`,
          );
        } else {
          failures += 1;
          assert.ok(fileSystem.fired.length > 0, `${operation} #${nth}: refused without a fault`);
          assert.equal(
            await nodeFileSystem.isLocked(sessionPath),
            false,
            `${operation} #${nth}: the lock is still held`,
          );
        }
      }
    }
    assert.ok(failures >= operations.length, `only ${failures} rounds met their fault`);
  });

  it('a child whose transcript cannot be written is an error result its parent reads', async () => {
    const path = join(folder, 'parent-survives', 'main.jsonl');
    const fileSystem = new FaultyFileSystem(nodeFileSystem, {
      rules: [
        {
          operation: 'write',
          path: /main\.agents/,
          nth: 1,
          repeat: 'forever',
          fault: { kind: 'error', code: 'ENOSPC' },
        },
      ],
    });
    const main = policyModel('main', (turns) =>
      resultsOf(turns, 'spawn_agent').length === 0
        ? { calls: [{ name: 'spawn_agent', input: { agentType: 'worker', task: 'x' } }] }
        : { text: JSON.stringify(resultsOf(turns, 'spawn_agent')[0]) },
    );
    const registry: AgentRegistry = {
      main: { description: 'plans', model: main, system: 'main' },
      worker: {
        description: 'works',
        model: policyModel('worker', () => ({ text: 'never' })),
        system: 'w',
      },
    };
    const composer = new Composer({
      registry,
      fileSystem,
      loopDefaults: { sleep: async () => undefined, backoff: () => 0 },
    });
    const { run } = await composer.start({ path, agentType: 'main', task: 'go' });
    const result = await run;
    await composer.idle();
    assert.equal(result.status, 'finished');
    assert.ok(fileSystem.fired.length > 0);
    const spawn = JSON.parse(result.text) as { isError: boolean; output: string };
    assert.equal(spawn.isError, true);
    assert.match(spawn.output, /^Cannot start worker-.*ENOSPC/);
  });
});
