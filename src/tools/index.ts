import type { Programs } from '../sandbox/programs.js';
import { createBashTool } from './bash.js';
import { createGitTool } from './git.js';
import { readFileTool } from './read-file.js';
import type { FindingsSink } from '../audit/report.js';
import { createReportFindingsTool } from './report-findings.js';
import type { Tool } from './tool.js';

/**
 * The tools of a session, in the order the model sees them: their definitions are the first bytes of every cached
 * prompt, so this order is part of the cache key. Adding a tool is one file and one line here. An audit (a sink for
 * the report) adds report_findings; `git` (the binary, when the root is a confined repository) adds the history tool.
 */
export function sessionTools(programs: Programs, audit: FindingsSink | null, git: string | null = null): Tool<any>[] {
  return [
    readFileTool,
    createBashTool(programs),
    ...(git !== null ? [createGitTool(git, programs)] : []),
    ...(audit ? [createReportFindingsTool(audit)] : []),
  ];
}
