// Gitea-compatible markup rendering, the entry points: markdown-it for the markdown (markdown-rules.ts), links
// resolved against the render context (links.ts), and the result sanitised (sanitiser.ts).
import { commentLinks, fileLinks, type LinkResolver, wikiLinks } from './links.ts';
import { createMarkdown, linkMentions, type MarkdownRenderer, type RenderEnv } from './markdown-rules.ts';
import { sanitizeHtml } from './sanitiser.ts';

export interface RenderRequest {
    text: string;
    mode?: string;
    context?: string;
    filePath?: string;
    wiki?: boolean;
}

/** A parsed document: the names its mentions use, to look up before it is rendered. */
export interface PreparedMarkup {
    /** Distinct lower-case names, in order of first use, at most MAX_MENTION_LOOKUPS. */
    mentionNames: string[];
    /** The HTML, with the mentions of the given (lower-case) names linked. */
    render(mentionable: ReadonlySet<string>): string;
}
export type PrepareResult = { ok: true; markup: PreparedMarkup } | { ok: false; message: string };

/** Mentions link only to users that are looked up; at most this many distinct names are, the rest stay text. */
export const MAX_MENTION_LOOKUPS = 1000;

const MARKDOWN_EXTENSIONS = new Set(['.md', '.markdown', '.mdown', '.mkd', '.livemd']);

let plainRenderer: MarkdownRenderer | undefined;
let commentRenderer: MarkdownRenderer | undefined;

/** Gitea's markdown of files and documents; made by the first render. */
function plainMarkdown(): MarkdownRenderer {
    plainRenderer ??= createMarkdown(false);
    return plainRenderer;
}

/** Gitea's markdown of comments (line breaks kept); made by the first render. */
function commentMarkdown(): MarkdownRenderer {
    commentRenderer ??= createMarkdown(true);
    return commentRenderer;
}

const NOTHING_TO_LOOK_UP: PreparedMarkup = { mentionNames: [], render: () => '' };

function prepare(md: MarkdownRenderer, text: string, links: LinkResolver | undefined, issueRefs: boolean): PreparedMarkup {
    if (text === '') {
        return NOTHING_TO_LOOK_UP;
    }
    const env: RenderEnv = {
        links,
        issueRefs,
        slugCounts: new Map(),
        mentionNames: new Set(),
        maxMentionNames: MAX_MENTION_LOOKUPS,
        mentionable: new Set(),
    };
    const tokens = md.parse(text, env);
    return {
        mentionNames: [...env.mentionNames],
        render(mentionable) {
            if (mentionable.size > 0) {
                env.mentionable = mentionable;
                linkMentions(md, tokens, env);
            }
            return sanitizeHtml(md.renderer.render(tokens, md.options, env));
        },
    };
}

function isMarkdownFile(filePath: string): boolean {
    const dot = filePath.lastIndexOf('.');
    return filePath === '' || (dot > filePath.lastIndexOf('/') && MARKDOWN_EXTENSIONS.has(filePath.slice(dot).toLowerCase()));
}

/** Raw markdown, as Gitea's RenderRaw: no post-processing, so links stay as written and mention nobody. */
export function renderRawMarkdown(text: string): string {
    return prepare(plainMarkdown(), text, undefined, false).render(new Set());
}

function modeOf(request: RenderRequest): string {
    return request.wiki === true ? 'wiki' : (request.mode ?? '');
}

/** Parses the text in its mode (routers/common/markup.go); an unknown mode or file type is refused. */
export function prepareMarkup(request: RenderRequest, rootUrl: string): PrepareResult {
    const mode = modeOf(request);
    const context = request.context ?? '';
    const filePath = request.filePath ?? '';
    switch (mode) {
        case '':
        case 'markdown':
            return { ok: true, markup: prepare(plainMarkdown(), request.text, undefined, false) };
        case 'gfm':
        case 'file':
            if (mode === 'file' && !isMarkdownFile(filePath)) {
                return { ok: false, message: 'unable to find a render' };
            }
            return { ok: true, markup: prepare(plainMarkdown(), request.text, fileLinks(rootUrl, context, filePath), false) };
        case 'comment':
            return { ok: true, markup: prepare(commentMarkdown(), request.text, commentLinks(rootUrl, context), true) };
        case 'wiki':
            return { ok: true, markup: prepare(plainMarkdown(), request.text, wikiLinks(rootUrl, context), false) };
        default:
            return { ok: false, message: `unsupported render mode: ${mode}` };
    }
}

export type RenderResult = { ok: true; html: string } | { ok: false; message: string };

/** Renders in one step, linking the mentions of the given lower-case names (none by default). */
export function renderMarkup(request: RenderRequest, rootUrl: string, mentionable: ReadonlySet<string> = new Set()): RenderResult {
    const prepared = prepareMarkup(request, rootUrl);
    return prepared.ok ? { ok: true, html: prepared.markup.render(mentionable) } : prepared;
}
