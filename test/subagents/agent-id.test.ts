import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { agentIdForSpawn } from '../../src/subagents/agent-id.ts';
import {
  childTranscriptPath,
  parentLinkPath,
  parentTranscriptPath,
} from '../../src/subagents/child-layout.ts';
import { isAgentId } from '../../src/transcript/records.ts';

const seed = Number(process.env.SEED ?? Date.now());
console.log('seed', seed);

describe('agent ids', () => {
  it('keeps plain ids readable', () => {
    assert.equal(
      agentIdForSpawn({ agentType: 'researcher', callId: 'call_1', parentAgentId: 'main' }),
      'researcher-call_1',
    );
  });

  it('are always safe file names, a pure function of the spawn call, and distinct for distinct calls', () => {
    const seen = new Map<string, string>();
    fc.assert(
      fc.property(
        fc.string({ maxLength: 80 }),
        fc.string({ maxLength: 200 }),
        (agentType, callId) => {
          const id = agentIdForSpawn({ agentType, callId, parentAgentId: 'main' });
          assert.ok(isAgentId(id), id);
          assert.equal(id, agentIdForSpawn({ agentType, callId, parentAgentId: 'other' }));
          const key = `${agentType}\0${callId}`;
          const previous = seen.get(id);
          assert.ok(previous === undefined || previous === key, `${id} made from two calls`);
          seen.set(id, key);
        },
      ),
      { seed, numRuns: 2000 },
    );
  });

  it('makes provider-style call ids and hostile ones into distinct ids', () => {
    const calls = [
      'toolu_01A09q90qw90lq917835lq9',
      'call_abc/../../x',
      'call_abc-x',
      '..',
      '',
      'a'.repeat(300),
      'é',
    ];
    const ids = calls.map((callId) =>
      agentIdForSpawn({ agentType: 'worker', callId, parentAgentId: 'main' }),
    );
    assert.equal(new Set(ids).size, ids.length);
    for (const id of ids) assert.ok(isAgentId(id), id);
  });
});

describe('child layout', () => {
  it('puts children in X.agents/, recursively, and links back relatively', () => {
    const child = childTranscriptPath('runs/main.jsonl', 'researcher-1');
    assert.equal(child, 'runs/main.agents/researcher-1.jsonl');
    const grandchild = childTranscriptPath(child, 'helper-2');
    assert.equal(grandchild, 'runs/main.agents/researcher-1.agents/helper-2.jsonl');
    assert.equal(parentTranscriptPath(grandchild), child);
    assert.equal(parentTranscriptPath(child), 'runs/main.jsonl');
    assert.equal(parentTranscriptPath('runs/main.jsonl'), null);
    assert.equal(parentLinkPath(grandchild, child), '../researcher-1.jsonl');
  });

  it('refuses unsafe ids', () => {
    for (const id of ['../x', '.', '..', 'a/b', '', '-a', 'a'.repeat(65), 'a..b']) {
      assert.throws(() => childTranscriptPath('runs/main.jsonl', id), TypeError, id);
    }
  });
});
