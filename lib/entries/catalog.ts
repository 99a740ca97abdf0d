/**
 * `nestjs-model-context/catalog`: the checks and reports behind the `nestjs-model-context catalog`
 * command, for build scripts that run them on a catalog themselves: description coverage, the
 * portability lint, and the Markdown and GitHub-annotation reports.
 */
export {
  catalogCoverage,
  lintCatalog,
  toolParameters,
  PORTABLE_NAME,
  SPEC_TOOL_NAME,
  type McpCatalog,
  type McpCatalogCoverage,
  type McpCatalogParameter,
  type McpCoverageCount,
  type McpLintFinding,
  type McpLintOptions,
  type McpToolSource,
} from '../catalog/catalog.js';
export { renderCatalogMarkdown, renderGithubAnnotations } from '../catalog/report.js';
