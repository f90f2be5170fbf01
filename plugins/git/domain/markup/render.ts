// Gitea-compatible markup rendering, the entry points: markdown-it for the markdown (markdown-rules.ts), links
// resolved against the render context (links.ts), and the result sanitised (sanitiser.ts).
import { commentBases, fileBases, type LinkBases, plainBases, wikiBases } from './links.ts';
import { createMarkdown, type MarkdownRenderer, type RenderEnv } from './markdown-rules.ts';
import { sanitizeHtml } from './sanitiser.ts';

export interface RenderRequest {
    text: string;
    mode?: string;
    context?: string;
    filePath?: string;
    wiki?: boolean;
    /** Lower-case names of the users a comment's mentions may link to; any other mention stays text. */
    mentionable?: ReadonlySet<string>;
}
export type RenderResult = { ok: true; html: string } | { ok: false; message: string };

const MARKDOWN_EXTENSIONS = new Set(['.md', '.markdown', '.mdown', '.mkd', '.livemd']);

const plainMarkdown = createMarkdown(false);
const commentMarkdown = createMarkdown(true);

function renderWith(md: MarkdownRenderer, text: string, bases: LinkBases, issueRefs: boolean, mentionable?: ReadonlySet<string>): string {
    if (text === '') {
        return '';
    }
    const env: RenderEnv = { bases, issueRefs, mentionable: mentionable ?? new Set(), slugCounts: new Map() };
    return sanitizeHtml(md.render(text, env));
}

function isMarkdownFile(filePath: string): boolean {
    const dot = filePath.lastIndexOf('.');
    return filePath === '' || (dot > filePath.lastIndexOf('/') && MARKDOWN_EXTENSIONS.has(filePath.slice(dot).toLowerCase()));
}

export function renderRawMarkdown(text: string, rootUrl: string): string {
    return renderWith(plainMarkdown, text, plainBases(rootUrl), false);
}

function modeOf(request: RenderRequest): string {
    return request.wiki === true ? 'wiki' : (request.mode ?? '');
}

/** Mentions link only to users that are looked up; at most this many distinct names are, the rest stay text. */
export const MAX_MENTION_LOOKUPS = 1000;
const MENTION_CANDIDATE = /@(\w[\w.-]*)/g;
// User names are at most 40 characters long: a longer run names nobody and is not looked up.
const MAX_USER_NAME_LENGTH = 40;

// A loop, not /[.-]+$/, which backtracks quadratically through a long run of dots and dashes.
function withoutTrailingDotsAndDashes(run: string): string {
    let end = run.length;
    while (end > 0 && (run[end - 1] === '.' || run[end - 1] === '-')) {
        end--;
    }
    return run.slice(0, end);
}

/**
 * The distinct lower-case names the text may mention, in order of first use, to look up before rendering it:
 * a superset of what the mention rule links (it also scans code and links), none outside comment mode.
 */
export function mentionedNames(request: RenderRequest): string[] {
    if (modeOf(request) !== 'comment' || !request.text.includes('@')) {
        return [];
    }
    const names = new Set<string>();
    for (const [, run = ''] of request.text.matchAll(MENTION_CANDIDATE)) {
        const name = withoutTrailingDotsAndDashes(run).toLowerCase();
        if (name.length <= MAX_USER_NAME_LENGTH) {
            names.add(name);
        }
        if (names.size === MAX_MENTION_LOOKUPS) {
            break;
        }
    }
    return [...names];
}

export function renderMarkup(request: RenderRequest, rootUrl: string): RenderResult {
    const mode = modeOf(request);
    const context = request.context ?? '';
    const filePath = request.filePath ?? '';
    switch (mode) {
        case '':
        case 'markdown':
            return { ok: true, html: renderRawMarkdown(request.text, rootUrl) };
        case 'gfm':
        case 'file':
            if (mode === 'file' && !isMarkdownFile(filePath)) {
                return { ok: false, message: 'unable to find a render' };
            }
            return { ok: true, html: renderWith(plainMarkdown, request.text, fileBases(rootUrl, context, filePath), false) };
        case 'comment':
            return { ok: true, html: renderWith(commentMarkdown, request.text, commentBases(rootUrl, context), true, request.mentionable) };
        case 'wiki':
            return { ok: true, html: renderWith(plainMarkdown, request.text, wikiBases(rootUrl, context), false) };
        default:
            return { ok: false, message: `unsupported render mode: ${mode}` };
    }
}
