import { createHash } from 'node:crypto';
import { isAgentId } from '../transcript/records.ts';

/**
 * What an agent id is made from: the spawn call that asks for the child.
 *
 * @example
 * const spawn: SpawnIdentity = { agentType: 'researcher', callId: 'call_1', parentAgentId: 'main' };
 */
export interface SpawnIdentity {
  agentType: string;
  /** The id of the parent's `spawn_agent` call: the identity of the spawn. */
  callId: string;
  /** The agent id of the parent run. */
  parentAgentId: string;
}

/**
 * Makes the agent id of a child. It must be a pure function of the spawn call (same call →
 * same id): that is what makes one spawn call unable to produce two children, even across a
 * crash, because the child's transcript path is derived from the id. Its result is checked
 * with `isAgentId` before it becomes a path.
 *
 * @example
 * const ids: AgentIdFactory = ({ agentType, callId }) => `${agentType}-${callId.slice(-8)}`;
 */
export type AgentIdFactory = (spawn: SpawnIdentity) => string;

const TYPE_LENGTH = 24;
const CALL_LENGTH = 28;

/**
 * The default {@link AgentIdFactory}: `<agentType>-<callId>`, with anything that is not a
 * letter, digit, `_` or `-` replaced and long parts cut; whenever that changed either part, a
 * digest of the originals is appended, so two different calls never share an id.
 *
 * @example
 * agentIdForSpawn({ agentType: 'researcher', callId: 'call_1', parentAgentId: 'main' });
 * // 'researcher-call_1'
 * agentIdForSpawn({ agentType: 'researcher', callId: '../x', parentAgentId: 'main' });
 * // 'researcher-x-<8 hex digits>'
 */
export function agentIdForSpawn(spawn: SpawnIdentity): string {
  const type = slug(spawn.agentType, TYPE_LENGTH) || 'agent';
  const call = slug(spawn.callId, CALL_LENGTH) || 'call';
  const exact = type === spawn.agentType && call === spawn.callId;
  const suffix = exact
    ? ''
    : `-${createHash('sha256').update(`${spawn.agentType}\0${spawn.callId}`).digest('hex').slice(0, 8)}`;
  const id = `${type}-${call}${suffix}`;
  // The construction keeps to the pattern; the check makes that a guarantee, not a hope.
  if (!isAgentId(id)) throw new Error(`internal: derived an unsafe agent id ${id}`);
  return id;
}

function slug(text: string, length: number): string {
  return text
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, length)
    .replace(/-+$/, '');
}
