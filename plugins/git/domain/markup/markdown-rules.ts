// The markdown-it rules of Gitea's markdown: heading ids, table alignment, task lists, www. autolinks, file names
// that are not emphasis, and what Gitea's post-processing adds (modules/markup/html*.go): resolved links and images,
// links around images, [[short links]], issue references and mentions.
import { createRequire } from 'node:module';

import type MarkdownIt from 'markdown-it';
import type { StateCore, StateInline, Token } from 'markdown-it';

import type { LinkResolver } from './links.ts';
import { markedClass } from './sanitiser.ts';
import { shortLinkOf } from './short-links.ts';

export type MarkdownRenderer = InstanceType<typeof MarkdownIt>;

// A type alias (not an interface) so it fits markdown-it's index-signature Env.
export type RenderEnv = {
    /** Where links point; absent for raw markdown, which Gitea renders without its post-processing. */
    links?: LinkResolver;
    issueRefs: boolean;
    slugCounts: Map<string, number>;
    /** The distinct lower-case names that mentions use, gathered while parsing, at most maxMentionNames of them. */
    mentionNames: Set<string>;
    maxMentionNames: number;
    /** Those of mentionNames that name a user a mention links to, known once they are looked up. */
    mentionable: ReadonlySet<string>;
};

function attributeOf(token: Token, name: string): string {
    return String(token.attrGet(name) ?? '');
}

function envOf(state: { env: unknown }): RenderEnv | undefined {
    const env = state.env as Partial<RenderEnv> | undefined;
    return env?.slugCounts === undefined ? undefined : (env as RenderEnv);
}

// GitHub-style slug: lower-case, spaces to '-', everything but letters, digits, '-', '_' removed.
function slugify(text: string): string {
    return text
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
        .replace(/ /g, '-');
}

function uniqueSlug(slug: string, counts: Map<string, number>): string {
    const seen = counts.get(slug);
    counts.set(slug, (seen ?? 0) + 1);
    return seen === undefined ? slug : `${slug}-${seen}`;
}

function inlineText(token: Token): string {
    return (token.children ?? [])
        .filter((child) => child.type === 'text' || child.type === 'code_inline')
        .map((child) => child.content)
        .join('');
}

function headingIdsRule(state: StateCore): void {
    const env = envOf(state);
    const tokens = state.tokens;
    for (let index = 0; index < tokens.length; index++) {
        const token = tokens[index];
        const inline = tokens[index + 1];
        if (token?.type !== 'heading_open' || inline === undefined || env === undefined) {
            continue;
        }
        const slug = slugify(inlineText(inline));
        if (slug !== '') {
            token.attrSet('id', `user-content-${uniqueSlug(slug, env.slugCounts)}`);
        }
    }
}

function tableAlignRule(state: StateCore): void {
    for (const token of state.tokens) {
        if (token.type !== 'th_open' && token.type !== 'td_open') {
            continue;
        }
        const align = /text-align:\s*(left|center|right)/.exec(attributeOf(token, 'style'))?.[1];
        token.attrs = (token.attrs ?? []).filter(([name]) => name !== 'style');
        if (align !== undefined) {
            token.attrSet('align', align);
        }
    }
}

const TASK_PATTERN = /^\[([ xX])\][ \t]/;

function taskListRule(state: StateCore): void {
    const tokens = state.tokens;
    for (let index = 2; index < tokens.length; index++) {
        const inline = tokens[index];
        const listItem = tokens[index - 2];
        const first = inline?.children?.[0];
        if (inline?.type !== 'inline' || listItem?.type !== 'list_item_open' || first?.type !== 'text') {
            continue;
        }
        const match = TASK_PATTERN.exec(first.content);
        if (match === null) {
            continue;
        }
        first.content = first.content.slice(match[0].length);
        const checkbox = new state.Token('html_inline', '', 0);
        checkbox.content = match[1] === ' ' ? '<input type="checkbox" disabled=""/>' : '<input type="checkbox" disabled="" checked=""/>';
        inline.children?.unshift(checkbox);
        listItem.attrSet('data-attr-class', markedClass('task-list-item'));
    }
}

function imageLink(state: StateCore, href: string): [Token, Token] {
    const open = new state.Token('link_open', 'a', 1);
    open.attrs = [
        ['href', href],
        ['target', '_blank'],
    ];
    return [open, new state.Token('link_close', 'a', -1)];
}

// processNodeA: Gitea tests the whole '#...' value, so only footnote-style ids escape the prefix (a '#user-content-x' gets a second one).
function anchorHref(href: string): string {
    return href.includes(':user-content-') ? href : `#user-content-${href.slice(1)}`;
}

// Gitea's processNodeA and visitNodeImg: links resolve as pages, image sources as media, and an image outside a link
// (with a source that is neither empty nor data:) becomes a link to its page, opening in a new tab.
function linkResolveRule(state: StateCore): void {
    const links = envOf(state)?.links;
    if (links === undefined) {
        return;
    }
    for (const block of state.tokens) {
        if (block.type !== 'inline' || block.children === null) {
            continue;
        }
        const output: Token[] = [];
        let linkDepth = 0;
        for (const token of block.children) {
            if (token.type === 'link_open') {
                linkDepth++;
                const href = attributeOf(token, 'href');
                token.attrSet('href', href.startsWith('#') ? anchorHref(href) : links.resolve(href, 'default'));
            } else if (token.type === 'link_close') {
                linkDepth--;
            } else if (token.type === 'image' || token.type === SHORT_LINK_IMAGE) {
                const source = attributeOf(token, 'src');
                token.attrSet('src', links.resolve(source, 'media'));
                if (linkDepth === 0 && source !== '' && !source.startsWith('data:')) {
                    const [open, close] = imageLink(state, links.resolve(source, 'default'));
                    output.push(open, token, close);
                    continue;
                }
            }
            output.push(token);
        }
        block.children = output;
    }
}

// A text linker turns matches inside plain text tokens (outside links and code) into links.
// Its pattern's first group is leading context kept as text; linkFor returns the
// link attributes and how many characters after that group become the link text.
interface TextLinker {
    quickTest: RegExp;
    pattern: RegExp;
    linkFor(match: RegExpMatchArray, env: RenderEnv): { attrs: Array<[string, string]>; length: number } | undefined;
}

const ISSUE_LINKER: TextLinker = {
    quickTest: /#/,
    pattern: /(^|[\s([])#(\d+)(?=$|[\s)\]:;,.?!'"])/g,
    linkFor([whole, lead = '', issue], env) {
        const repoBase = env.links?.repoBase;
        if (repoBase === undefined) {
            return undefined;
        }
        return {
            attrs: [
                ['href', `${repoBase}issues/${issue}`],
                ['data-attr-class', markedClass('ref-issue')],
            ],
            length: whole.length - lead.length,
        };
    },
};

/** Names longer than this name nobody (Gitea's user names have at most 40 characters) and are not looked up. */
const MAX_USER_NAME_LENGTH = 40;

// references.mentionPattern ('@user' or '@org/team' after a space, '(' or '[' and before a space, an end of sentence,
// a quote or a closing bracket), with the leading context as an empty group: Gitea searches again from the end of the
// name, so the character after one mention may lead the next. Go's \s is ASCII white space only.
const MENTION_PATTERN =
    /(?<=^|[\t\n\f\r ([])()@([-\w][-.\w]*?|[-\w][-.\w]*?\/[-\w][-.\w]*?)(?=[\t\n\f\r ]|$|[:,;.?!](?:[\t\n\f\r ]|$)|['\])])/g;

// mentionProcessor: a mention links to the user's page when the name is one of a user that may be mentioned.
const MENTION_LINKER: TextLinker = {
    quickTest: /@/,
    pattern: MENTION_PATTERN,
    linkFor([whole, , name = ''], env) {
        if (env.links === undefined || !env.mentionable.has(name.toLowerCase())) {
            return undefined;
        }
        return { attrs: [['href', env.links.resolveRoot(name)]], length: whole.length };
    },
};

// GFM extended 'www.' autolinks (linkify-it's fuzzy mode is slow and also links bare domains like 'setup.py').
const WWW_LINKER: TextLinker = {
    quickTest: /www\./i,
    pattern: /(^|[\s(*_~])(www\.[\w-]+(?:\.[\w-]+)+[^\s<]*)/gi,
    linkFor([, , url = '']) {
        const trimmed = url.replace(/[?!.,:*_~'";]+$/, '').replace(/\)+$/, (parens) => {
            const unbalanced = url.split(')').length - url.split('(').length;
            return parens.slice(0, Math.max(0, parens.length - unbalanced));
        });
        return { attrs: [['href', `http://${trimmed}`]], length: trimmed.length };
    },
};

function textToken(state: StateCore, content: string): Token {
    const token = new state.Token('text', '', 0);
    token.content = content;
    return token;
}

function linkTokens(state: StateCore, text: string, linker: TextLinker, env: RenderEnv): Token[] {
    const output: Token[] = [];
    let last = 0;
    for (const match of text.matchAll(linker.pattern)) {
        const link = linker.linkFor(match, env);
        const start = (match.index ?? 0) + (match[1]?.length ?? 0);
        if (link === undefined || link.length === 0 || start < last) {
            continue;
        }
        if (start > last) {
            output.push(textToken(state, text.slice(last, start)));
        }
        const open = new state.Token('link_open', 'a', 1);
        open.attrs = link.attrs;
        output.push(open, textToken(state, text.slice(start, start + link.length)), new state.Token('link_close', 'a', -1));
        last = start + link.length;
    }
    if (last < text.length) {
        output.push(textToken(state, text.slice(last)));
    }
    return output;
}

function textLinkRule(linker: TextLinker, isEnabled: (env: RenderEnv) => boolean) {
    return (state: StateCore): void => {
        const env = envOf(state);
        if (env === undefined || !isEnabled(env)) {
            return;
        }
        for (const block of state.tokens) {
            if (block.type !== 'inline' || block.children === null || !linker.quickTest.test(block.content)) {
                continue;
            }
            const output: Token[] = [];
            let linkDepth = 0;
            for (const token of block.children) {
                linkDepth += token.type === 'link_open' ? 1 : token.type === 'link_close' ? -1 : 0;
                const isCandidate = token.type === 'text' && linkDepth === 0 && linker.quickTest.test(token.content);
                // One text token can hold tens of thousands of links: spreading them into push() would overflow the stack.
                for (const linked of isCandidate ? linkTokens(state, token.content, linker, env) : [token]) {
                    output.push(linked);
                }
            }
            block.children = output;
        }
    };
}

/** The distinct names that mentions in the parsed text use, lower-case, up to the env's bound. */
function mentionNamesRule(state: StateCore): void {
    const env = envOf(state);
    if (env?.links === undefined) {
        return;
    }
    for (const block of state.tokens) {
        if (block.type !== 'inline' || block.children === null || !block.content.includes('@')) {
            continue;
        }
        let linkDepth = 0;
        for (const token of block.children) {
            linkDepth += token.type === 'link_open' ? 1 : token.type === 'link_close' ? -1 : 0;
            if (token.type !== 'text' || linkDepth !== 0 || !token.content.includes('@')) {
                continue;
            }
            for (const [, , name = ''] of token.content.matchAll(MENTION_PATTERN)) {
                if (env.mentionNames.size === env.maxMentionNames) {
                    return;
                }
                if (name.length <= MAX_USER_NAME_LENGTH && !name.includes('/')) {
                    env.mentionNames.add(name.toLowerCase());
                }
            }
        }
    }
}

const SHORT_LINK_IMAGE = 'gitea_short_link_image';
const WORD_CHARACTERS = /\w*/y;

// The next occurrence of a mark, remembered per inline state, so that a line of many '[[' stays linear.
const nextMarks = new WeakMap<StateInline, Map<string, { from: number; at: number }>>();

function nextMark(state: StateInline, mark: string, from: number): number {
    const marks = nextMarks.get(state) ?? new Map<string, { from: number; at: number }>();
    nextMarks.set(state, marks);
    const known = marks.get(mark);
    // The first mark at or after known.from is also the first at or after any later position before it.
    if (known !== undefined && known.from <= from && (known.at === -1 || known.at >= from)) {
        return known.at;
    }
    const at = state.src.indexOf(mark, from);
    marks.set(mark, { from, at });
    return at;
}

// shortLinkPattern, \[\[(.*?)\]\](\w*): '[[' up to the first ']]' on the same line (Go's '.' stops at a line feed only),
// and the word characters after it.
function shortLinkAt(state: StateInline): { content: string; tail: string; end: number } | undefined {
    const close = nextMark(state, ']]', state.pos + 2);
    const lineEnd = nextMark(state, '\n', state.pos + 2);
    if (close === -1 || (lineEnd !== -1 && lineEnd < close)) {
        return undefined;
    }
    WORD_CHARACTERS.lastIndex = close + 2;
    const tail = WORD_CHARACTERS.exec(state.src)?.[0] ?? '';
    return { content: state.src.slice(state.pos + 2, close), tail, end: close + 2 + tail.length };
}

// '[[Page]]', '[[Name|Page]]', '[[image.png|alt=...|title=...]]' outside links, in the modes Gitea post-processes.
// After markdown-it's own link rule, so that '[[x]](url)' stays a link, as in goldmark.
function shortLinkRule(state: StateInline, silent: boolean): boolean {
    const linkLevel = (state as StateInline & { linkLevel?: number }).linkLevel ?? 0;
    if (envOf(state)?.links === undefined || linkLevel > 0 || !state.src.startsWith('[[', state.pos)) {
        return false;
    }
    const found = shortLinkAt(state);
    if (found === undefined || found.end > state.posMax) {
        return false;
    }
    if (!silent) {
        // The processor reads the rendered text: escapes and entities are already decoded there.
        const unescape = (text: string) => state.md.utils.unescapeAll(text);
        const link = shortLinkOf(unescape(found.content), found.tail, unescape);
        state.push('link_open', 'a', 1).attrs = [['href', link.href]];
        if (link.image === undefined) {
            state.push('text', '', 0).content = link.name;
        } else {
            const image = state.push(SHORT_LINK_IMAGE, 'img', 0);
            image.attrs = [
                ['src', link.href],
                ['title', link.image.title],
                ...(link.image.alt === '' ? [] : [['alt', link.image.alt] as [string, string]]),
            ];
        }
        state.push('link_close', 'a', -1);
    }
    state.pos = found.end;
    return true;
}

// Like GitHub, '__init__.py' is a file name, not emphasis: a '_' run followed by '.' and a letter or
// digit is literal text, so it can close nothing (and its opener stays unmatched).
function filenameUnderscoreRule(state: StateInline, silent: boolean): boolean {
    let end = state.pos;
    while (state.src.charCodeAt(end) === 0x5f) {
        end++;
    }
    if (end === state.pos || !/^\.[\p{L}\p{N}]/u.test(state.src.slice(end, end + 2))) {
        return false;
    }
    if (!silent) {
        state.pending += state.src.slice(state.pos, end);
    }
    state.pos = end;
    return true;
}

const mentionLinkRule = textLinkRule(MENTION_LINKER, (env) => env.links !== undefined);

/** Links the mentions in parsed tokens, once the names the env gathered are looked up into env.mentionable. */
export function linkMentions(md: MarkdownRenderer, tokens: Token[], env: RenderEnv): void {
    const state = new md.core.State('', md, env);
    state.tokens = tokens;
    mentionLinkRule(state);
}

function codeLanguage(info: string): string {
    const language =
        info
            .trim()
            .split(/\s+/)[0]
            ?.replace(/[^\w+#.-]/g, '') ?? '';
    return language === '' ? 'text' : language.toLowerCase();
}

/** Loaded by the first render, not at start: markdown-it with its entities and linkify tables is about 10 MB. */
export function createMarkdown(breaks: boolean): MarkdownRenderer {
    const MarkdownItClass = createRequire(import.meta.url)('markdown-it') as typeof MarkdownIt;
    const md = new MarkdownItClass({ html: true, linkify: true, typographer: false, breaks });
    md.core.ruler.after(
        'linkify',
        'gitea_www_links',
        textLinkRule(WWW_LINKER, () => true),
    );
    md.inline.ruler.after('link', 'gitea_short_link', shortLinkRule);
    md.inline.ruler.before('emphasis', 'gitea_filename_underscores', filenameUnderscoreRule);
    md.core.ruler.push('gitea_heading_ids', headingIdsRule);
    md.core.ruler.push('gitea_table_align', tableAlignRule);
    md.core.ruler.push('gitea_task_lists', taskListRule);
    md.core.ruler.push(
        'gitea_issue_refs',
        textLinkRule(ISSUE_LINKER, (env) => env.issueRefs),
    );
    md.core.ruler.push('gitea_links', linkResolveRule);
    md.core.ruler.push('gitea_mention_names', mentionNamesRule);
    md.renderer.rules[SHORT_LINK_IMAGE] = (tokens, index, _options, _env, self) => `<img${self.renderAttrs(tokens[index] as Token)}>`;
    md.renderer.rules.s_open = () => '<del>';
    md.renderer.rules.s_close = () => '</del>';
    md.renderer.rules.fence = (tokens, index) => {
        const token = tokens[index];
        const language = codeLanguage(token?.info ?? '');
        const code = md.utils.escapeHtml(token?.content ?? '');
        return `<pre data-attr-class="${markedClass('code-block')}"><code data-attr-class="${markedClass(`chroma language-${language} display`)}">${code}</code></pre>\n`;
    };
    return md;
}
