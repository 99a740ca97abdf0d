/**
 * Just enough Markdown reading for the docs specs: fenced code blocks with the HTML comment that
 * annotates them, headings' GitHub anchors, and the links of a page.
 */

/** A fenced code block: its language, its text, the 1-based line of its opening fence, and the annotation before it. */
export interface FencedBlock {
  lang: string;
  text: string;
  line: number;
  /** The `<!-- ... -->` comment on the last non-blank line before the fence, without its delimiters. */
  note?: string;
}

/** Every fenced (```) block of a Markdown text, in order. */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const lines = markdown.split('\n');
  const blocks: FencedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]!); i++) body.push(lines[i]!.slice(open[1]!.length));
    let before = start - 1;
    while (before >= 0 && lines[before]!.trim() === '') before--;
    const note = before >= 0 ? /^<!--\s*(.*?)\s*-->$/.exec(lines[before]!.trim())?.[1] : undefined;
    blocks.push({ lang: open[2]!, text: body.join('\n') + '\n', line: start + 1, ...(note !== undefined && { note }) });
  }
  return blocks;
}

/** The text with fenced blocks and inline code spans blanked, so their contents are not read as links or headings. */
function prose(markdown: string): string {
  return markdown
    .replace(/^(\s*)```[\s\S]*?^\s*```\s*$/gm, (block) => block.replace(/[^\n]/g, ' '))
    .replace(/`[^`\n]*`/g, (code) => ' '.repeat(code.length));
}

/**
 * GitHub's anchor for a heading text: lower case, markup and punctuation removed (hyphens and
 * underscores stay), each space a hyphen.
 */
export function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a page's headings, with GitHub's `-1`, `-2` suffixes for repeated ones. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const code = markdown.replace(/^(\s*)```[\s\S]*?^\s*```\s*$/gm, (block) => block.replace(/[^\n]/g, ' '));
  for (const match of code.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(match[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.add(count === 0 ? base : `${base}-${count}`);
  }
  for (const match of markdown.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) out.add(match[1]!);
  return out;
}

/** The targets of a page's inline links and images, with their 1-based lines (code excluded). */
export function links(markdown: string): Array<{ target: string; line: number }> {
  const text = prose(markdown);
  const out: Array<{ target: string; line: number }> = [];
  for (const match of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    out.push({ target: match[1]!, line: text.slice(0, match.index).split('\n').length });
  }
  return out;
}

/**
 * The sections whose ```ts blocks test/e2e/readme.e2e-spec.ts compiles (and runs) itself, as whole
 * apps: the docs spec accepts `<!-- checked-by: readme.e2e-spec -->` on blocks of these only.
 */
export const README_SPEC_SECTIONS: ReadonlyArray<{ page: string; heading: string }> = [
  { page: 'README.md', heading: '## Quick start' },
  { page: 'docs/testing.md', heading: '## Examples: node:test and Jest' },
];
