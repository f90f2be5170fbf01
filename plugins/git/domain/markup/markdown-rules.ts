// The markdown-it rules of Gitea's markdown: heading ids, table alignment, task lists, resolved links and images,
// issue references and mentions, www. autolinks, wiki links, and file names that are not emphasis.
import MarkdownIt from 'markdown-it';
import type { StateCore, StateInline, Token } from 'markdown-it';

import { escapePathSegments, type LinkBases, resolveUrl } from './links.ts';
import { markedClass } from './sanitiser.ts';

export type MarkdownRenderer = InstanceType<typeof MarkdownIt>;

// A type alias (not an interface) so it fits markdown-it's index-signature Env.
export type RenderEnv = {
    bases: LinkBases;
    issueRefs: boolean;
    mentionable: ReadonlySet<string>;
    slugCounts: Map<string, number>;
};

function attributeOf(token: Token, name: string): string {
    return String(token.attrGet(name) ?? '');
}

function envOf(state: { env: unknown }): RenderEnv | undefined {
    const env = state.env as Partial<RenderEnv> | undefined;
    return env?.bases === undefined ? undefined : (env as RenderEnv);
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

function imageWrapper(state: StateCore, href: string): [Token, Token] {
    const open = new state.Token('link_open', 'a', 1);
    open.attrs = [
        ['href', href],
        ['target', '_blank'],
        ['rel', 'nofollow noopener'],
    ];
    return [open, new state.Token('link_close', 'a', -1)];
}

// Resolves relative links and images, and wraps images not already in a link.
function linkResolveRule(state: StateCore): void {
    const env = envOf(state);
    if (env === undefined) {
        return;
    }
    const { bases } = env;
    for (const block of state.tokens) {
        if (block.type !== 'inline' || block.children === null) {
            continue;
        }
        const output: Token[] = [];
        let linkDepth = 0;
        for (const token of block.children) {
            if (token.type === 'link_open') {
                linkDepth++;
                token.attrSet('href', resolveUrl(attributeOf(token, 'href'), bases.linkBase, bases.rootUrl));
            } else if (token.type === 'link_close') {
                linkDepth--;
            } else if (token.type === 'image') {
                const src = resolveUrl(attributeOf(token, 'src'), bases.mediaBase, bases.rootUrl);
                token.attrSet('src', src);
                if (linkDepth === 0 && !src.toLowerCase().startsWith('data:')) {
                    const [open, close] = imageWrapper(state, src);
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

const REFERENCE_LINKER: TextLinker = {
    quickTest: /[#@]/,
    pattern: /(^|[\s([])(?:#(\d+)|@([\w][\w.-]*[\w]|[\w]))(?=$|[\s)\]:;,.?!'"])/g,
    linkFor([whole, lead = '', issue, user], env) {
        const length = whole.length - lead.length;
        if (issue !== undefined) {
            const repoBase = env.bases.repoBase;
            return repoBase === undefined
                ? undefined
                : {
                      attrs: [
                          ['href', `${repoBase}issues/${issue}`],
                          ['data-attr-class', markedClass('ref-issue')],
                      ],
                      length,
                  };
        }
        if (user === undefined || !env.mentionable.has(user.toLowerCase())) {
            return undefined;
        }
        return {
            attrs: [
                ['href', `${env.bases.rootUrl}${encodeURIComponent(user)}`],
                ['data-attr-class', markedClass('mention')],
            ],
            length,
        };
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

function wikiPageUrl(page: string, wikiBase: string): string {
    if (/^https?:\/\//i.test(page)) {
        return page;
    }
    return wikiBase + escapePathSegments(page.trim().replace(/ /g, '-'));
}

// '[[Page]]' and '[[Name|Page]]', only when the env carries a wiki base.
function wikiLinkRule(state: StateInline, silent: boolean): boolean {
    const wikiBase = envOf(state)?.bases.wikiBase;
    if (wikiBase === undefined || !state.src.startsWith('[[', state.pos)) {
        return false;
    }
    const end = state.src.indexOf(']]', state.pos + 2);
    const inner = end === -1 ? '' : state.src.slice(state.pos + 2, end);
    if (inner.trim() === '' || /[\n[\]]/.test(inner)) {
        return false;
    }
    if (!silent) {
        const bar = inner.indexOf('|');
        const name = bar === -1 ? inner : inner.slice(0, bar);
        const page = bar === -1 ? inner : inner.slice(bar + 1);
        state.push('link_open', 'a', 1).attrs = [['href', wikiPageUrl(page, wikiBase)]];
        state.push('text', '', 0).content = name.trim();
        state.push('link_close', 'a', -1);
    }
    state.pos = end + 2;
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

function codeLanguage(info: string): string {
    const language =
        info
            .trim()
            .split(/\s+/)[0]
            ?.replace(/[^\w+#.-]/g, '') ?? '';
    return language === '' ? 'text' : language.toLowerCase();
}

export function createMarkdown(breaks: boolean): MarkdownRenderer {
    const md = new MarkdownIt({ html: true, linkify: true, typographer: false, breaks });
    md.core.ruler.after(
        'linkify',
        'gitea_www_links',
        textLinkRule(WWW_LINKER, () => true),
    );
    md.inline.ruler.before('link', 'gitea_wiki_link', wikiLinkRule);
    md.inline.ruler.before('emphasis', 'gitea_filename_underscores', filenameUnderscoreRule);
    md.core.ruler.push('gitea_heading_ids', headingIdsRule);
    md.core.ruler.push('gitea_table_align', tableAlignRule);
    md.core.ruler.push('gitea_task_lists', taskListRule);
    md.core.ruler.push(
        'gitea_issue_refs',
        textLinkRule(REFERENCE_LINKER, (env) => env.issueRefs),
    );
    md.core.ruler.push('gitea_links', linkResolveRule);
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
