import { dirname, join } from 'node:path';
import type { AgentRegistry } from '../../../src/subagents/agent-definition.ts';
import { crashTreeRegistry } from '../../subagents/support/crash-tree.ts';

/**
 * An `--agents` module for the three-level crash tree (test/subagents/support/crash-tree.ts):
 * `main` joins two workers, each worker joins a helper of its own, every side effect is logged
 * to `executions.log` beside the root transcript. Scripted, no network.
 */
export default function crashTreeAgents(context: { transcript: string }): AgentRegistry {
  return crashTreeRegistry(join(dirname(context.transcript), 'executions.log'), true);
}
