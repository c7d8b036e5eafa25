import { describe, expect, it } from 'vitest';
import { parseCall, unknownTool } from '../../src/mcp/tools.js';

// The MCP tools' argument checks at the edges the mutation run of src/mcp/tools.ts found untested in process
// (scripts/mutation-areas.json, area "mcp-caps"; test/mcp/server.test.ts sees them only through the spawned binary).
describe('unknownTool and parseCall', () => {
  it.each(['ask', 'ask_followup', 'audit', 'locate'])('%s is a tool', (name) => {
    expect(unknownTool(name)).toBeNull();
  });

  it('any other name is answered with the list of tools', () => {
    expect(unknownTool('asks')).toBe('unknown tool "asks"; the tools are ask, ask_followup, audit and locate');
    expect(parseCall('asks', {})).toBe('unknown tool "asks"; the tools are ask, ask_followup, audit and locate');
  });

  it('a field with two problems is named once, by its first', () => {
    // Too long and blank: the length, the first the schema check reports, not also the blank.
    expect(parseCall('ask', { question: ' '.repeat(20_001) })).toBe('question is 20001 characters; keep it under 20000');
  });
});
