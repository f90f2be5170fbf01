// Gitea-compatible markup rendering: markdown-it for the markdown, sanitize-html
// for a policy modelled on Gitea's bluemonday UGC policy.
import { randomBytes } from 'node:crypto';
import MarkdownIt from 'markdown-it';
import type { StateCore, StateInline, Token } from 'markdown-it';
import sanitize from 'sanitize-html';

type MarkdownRenderer = InstanceType<typeof MarkdownIt>;

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

// ---------------------------------------------------------------------------
// Render context: where relative links and images point, which extras are on.
// ---------------------------------------------------------------------------

interface LinkBases {
    rootUrl: string;
    linkBase: string; // relative links resolve against this (ends with '/')
    mediaBase: string; // relative images resolve against this (ends with '/')
    wikiBase?: string; // [[Page]] links resolve against this, only in wiki mode
    repoBase?: string; // '<rootUrl>{owner}/{repo}/' when known
}

// A type alias (not an interface) so it fits markdown-it's index-signature Env.
type RenderEnv = {
    bases: LinkBases;
    issueRefs: boolean;
    mentionable: ReadonlySet<string>;
    slugCounts: Map<string, number>;
};

interface RepoContext {
    owner?: string;
    repo?: string;
    refPath?: string;
}

// Renderer-generated classes travel through the sanitiser as data-attr-class
// values carrying this prefix; user-supplied data-attr-class never has it.
const CLASS_MARKER = `gh${randomBytes(8).toString('hex')}-`;
const MARKDOWN_EXTENSIONS = new Set(['.md', '.markdown', '.mdown', '.mkd', '.livemd']);
const SCHEME_PATTERN = /^[a-z][a-z0-9+.-]*:/i;

function markedClass(value: string): string {
    return CLASS_MARKER + value;
}

function joinUrl(...parts: string[]): string {
    const path = parts
        .filter((part) => part !== '' && part !== '.')
        .map((part) => part.replace(/^\/+|\/+$/g, ''))
        .join('/');
    return path === '' ? '' : `${path}/`;
}

function escapePathSegments(path: string): string {
    return path
        .split('/')
        .map((segment) => encodeURIComponent(segment))
        .join('/');
}

function contextPath(context: string, rootUrl: string): string {
    if (context.startsWith(rootUrl)) {
        return context.slice(rootUrl.length);
    }
    if (SCHEME_PATTERN.test(context)) {
        try {
            return new URL(context).pathname;
        } catch {
            return '';
        }
    }
    return context;
}

// '/{owner}/{repo}/src/{branch|commit|tag}/{ref...}/{dir}' or '/{owner}/{repo}'
function parseContext(context: string, rootUrl: string, fileDir: string): RepoContext {
    const fields = contextPath(context, rootUrl)
        .split('/')
        .filter((field) => field !== '');
    const srcIndex = fields.indexOf('src');
    if (srcIndex >= 2 && ['branch', 'commit', 'tag'].includes(fields[srcIndex + 1] ?? '') && fields.length > srcIndex + 2) {
        let refPath = fields.slice(srcIndex + 1).join('/');
        if (fileDir !== '' && refPath.endsWith(`/${fileDir}`)) {
            refPath = refPath.slice(0, -fileDir.length - 1);
        }
        return { owner: fields[srcIndex - 2], repo: fields[srcIndex - 1], refPath };
    }
    return fields.length >= 2 ? { owner: fields[0], repo: fields[1] } : {};
}

function repoBaseOf(rootUrl: string, repo: RepoContext): string | undefined {
    if (repo.owner === undefined || repo.repo === undefined) {
        return undefined;
    }
    return `${rootUrl}${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.repo)}/`;
}

function directoryOf(filePath: string): string {
    const trimmed = filePath.replace(/^\/+/, '');
    const slash = trimmed.lastIndexOf('/');
    return slash === -1 ? '' : trimmed.slice(0, slash);
}

function plainBases(rootUrl: string): LinkBases {
    return { rootUrl, linkBase: rootUrl, mediaBase: rootUrl };
}

function fileBases(rootUrl: string, context: string, filePath: string): LinkBases {
    const fileDir = directoryOf(filePath);
    const repo = parseContext(context, rootUrl, fileDir);
    const repoBase = repoBaseOf(rootUrl, repo);
    if (repoBase === undefined) {
        return plainBases(rootUrl);
    }
    const refPath = escapePathSegments(repo.refPath ?? '');
    const dir = escapePathSegments(fileDir);
    return {
        rootUrl,
        repoBase,
        linkBase: repoBase + joinUrl('src', refPath, dir),
        mediaBase: repoBase + joinUrl('media', refPath, dir),
    };
}

function commentBases(rootUrl: string, context: string): LinkBases {
    const repoBase = repoBaseOf(rootUrl, parseContext(context, rootUrl, ''));
    const base = repoBase ?? rootUrl;
    return { rootUrl, repoBase, linkBase: base, mediaBase: base };
}

function wikiBases(rootUrl: string, context: string): LinkBases {
    const repoBase = repoBaseOf(rootUrl, parseContext(context, rootUrl, ''));
    const wikiBase = `${repoBase ?? rootUrl}wiki/`;
    return { rootUrl, repoBase, linkBase: wikiBase, mediaBase: `${wikiBase}raw/`, wikiBase };
}

function resolveUrl(url: string, base: string, rootUrl: string): string {
    if (url === '' || url.startsWith('#') || url.startsWith('//') || SCHEME_PATTERN.test(url)) {
        return url;
    }
    try {
        return new URL(url.startsWith('/') ? url.slice(1) : url, url.startsWith('/') ? rootUrl : base).href;
    } catch {
        return url;
    }
}

// ---------------------------------------------------------------------------
// markdown-it rules
// ---------------------------------------------------------------------------

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

function createMarkdown(breaks: boolean): MarkdownRenderer {
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

const plainMarkdown = createMarkdown(false);
const commentMarkdown = createMarkdown(true);

// ---------------------------------------------------------------------------
// Sanitiser
// ---------------------------------------------------------------------------

const MATHML_TAGS = (
    'math mi mn mo mtext mspace ms mrow mfrac msqrt mroot mstyle merror mpadded mphantom msub msup ' +
    'msubsup munder mover munderover mmultiscripts mprescripts none mtable mtr mtd semantics annotation'
).split(' ');

// Most frequent tags first: sanitize-html looks tags up with indexOf.
const ALLOWED_TAGS = [
    ...(
        'p a li code td tr em strong ul ol pre img br span div th input h1 h2 h3 h4 h5 h6 b center i tt del ' +
        'blockquote table thead tbody ins sup sub tfoot label dl dt dd kbd q samp var hr ruby rt rp s strike ' +
        'summary details caption figure figcaption abbr bdo cite dfn mark small time video wbr picture source ' +
        'svg path'
    ).split(' '),
    ...MATHML_TAGS,
];

const GENERIC_ATTRIBUTES = (
    'align alt colspan rowspan title name rel target open start type value width height lang dir itemprop ' +
    'data-markdown-generated-content data-attr-class id'
).split(' ');

const STYLED_TAGS = ['div', 'span', 'p', 'tr', 'th', 'td'];
const STYLE_PROPERTIES = new Set(['color', 'background-color']);
const COLOR_VALUE = /^(#[0-9a-f]{3,8}|[a-z]{3,30}|(rgb|rgba|hsl|hsla)\([\d\s.,%/]+\))$/i;
const DATA_IMAGE_PATTERN = /^data:image\/(png|gif|jpeg|webp)[;,]/i;
const URL_ATTRIBUTES = 'href src srcset action formaction xlink:href data poster background cite ping longdesc'.split(' ');

const ALLOWED_ATTRIBUTES: Record<string, string[]> = {
    '*': GENERIC_ATTRIBUTES,
    a: ['href'],
    img: ['src', 'loading'],
    video: ['src', 'autoplay', 'controls', 'muted', 'loop', 'playsinline'],
    source: ['src', 'srcset', 'media'],
    input: ['checked', 'disabled'],
    svg: ['viewbox', 'viewBox', 'aria-hidden'],
    path: ['fill-rule', 'd'],
    span: ['data-line-number', 'class'],
    li: ['class'],
    math: ['display', 'alttext'],
};
for (const tag of STYLED_TAGS) {
    ALLOWED_ATTRIBUTES[tag] = [...(ALLOWED_ATTRIBUTES[tag] ?? []), 'style'];
}

// Browsers drop ASCII whitespace/control characters inside a URL scheme.
function isUnsafeUrl(tag: string, attribute: string, value: string): boolean {
    // eslint-disable-next-line no-control-regex -- control characters are what we strip
    const compact = value.replace(/[\u0000-\u0020\u007f-\u009f\u00ad\u200b-\u200f\u2028\u2029\ufeff]/g, '').toLowerCase();
    const scheme = /^([a-z][a-z0-9+.-]*):/.exec(compact)?.[1];
    if (scheme === 'data') {
        return !(tag === 'img' && attribute === 'src' && DATA_IMAGE_PATTERN.test(compact));
    }
    return scheme === 'javascript' || scheme === 'vbscript';
}

function isUnsafeSrcset(value: string): boolean {
    return value.split(',').some((candidate) => isUnsafeUrl('source', 'srcset', candidate.trim().split(/\s+/)[0] ?? ''));
}

// Only 'color' and 'background-color' declarations with plain colour values survive.
function safeStyle(style: string): string {
    return style
        .split(';')
        .map((declaration) => /^\s*([\w-]+)\s*:\s*(.*?)\s*$/s.exec(declaration))
        .filter((match) => match !== null && STYLE_PROPERTIES.has((match[1] ?? '').toLowerCase()) && COLOR_VALUE.test(match[2] ?? ''))
        .map((match) => `${(match?.[1] ?? '').toLowerCase()}: ${match?.[2] ?? ''}`)
        .join('; ');
}

function withNofollow(rel: string | undefined, hasTarget: boolean): string {
    const tokens = new Set(
        (rel ?? '')
            .toLowerCase()
            .split(/\s+/)
            .filter((token) => /^(nofollow|noopener|noreferrer)$/.test(token)),
    );
    tokens.add('nofollow');
    if (hasTarget) {
        tokens.add('noopener');
    }
    return [...tokens].join(' ');
}

function transformAnyTag(tagName: string, attribs: sanitize.Attributes): sanitize.Tag {
    const rendererClass = attribs['data-attr-class'];
    if (rendererClass !== undefined) {
        delete attribs[rendererClass.startsWith(CLASS_MARKER) ? 'class' : 'data-attr-class'];
    }
    for (const attribute of URL_ATTRIBUTES) {
        const value = attribs[attribute];
        if (value !== undefined && (attribute === 'srcset' ? isUnsafeSrcset(value) : isUnsafeUrl(tagName, attribute, value))) {
            delete attribs[attribute];
        }
    }
    if (attribs.style !== undefined) {
        attribs.style = safeStyle(attribs.style);
        if (attribs.style === '') {
            delete attribs.style;
        }
    }
    for (const attribute of ['id', 'name']) {
        const value = attribs[attribute];
        if (value !== undefined && !value.startsWith('user-content-')) {
            attribs[attribute] = `user-content-${value}`;
        }
    }
    if (tagName === 'a' && attribs.href !== undefined) {
        attribs.rel = withNofollow(attribs.rel, attribs.target !== undefined);
    }
    return { tagName, attribs };
}

// allowedEmptyAttributes exists in sanitize-html 2.17 but not in its @types.
const SANITIZE_OPTIONS: sanitize.IOptions & { allowedEmptyAttributes: string[] } = {
    allowedTags: ALLOWED_TAGS,
    allowedAttributes: ALLOWED_ATTRIBUTES,
    allowedClasses: { span: [/^\w{0,2}$/], li: ['unchecked', 'checked', 'indeterminate'] },
    // Styles are filtered by safeStyle (keeps the author's spacing, no postcss round trip).
    parseStyleAttributes: false,
    allowedEmptyAttributes: ['alt', 'checked', 'disabled', 'open', 'autoplay', 'controls', 'muted', 'loop', 'playsinline'],
    // Scheme checks are done by transformAnyTag (deny-list); srcset is also checked against this list by sanitize-html.
    allowedSchemes: ['http', 'https', 'ftp', 'ftps', 'mailto', 'tel'],
    allowedSchemesAppliedToAttributes: [],
    allowProtocolRelative: true,
    disallowedTagsMode: 'discard',
    nonTextTags: ['script', 'style', 'textarea', 'option', 'xmp', 'noscript', 'template', 'iframe', 'noembed', 'noframes'],
    transformTags: { '*': transformAnyTag },
    exclusiveFilter: (frame) => frame.tag === 'input' && (frame.attribs.type ?? '').trim().toLowerCase() !== 'checkbox',
    parser: { decodeEntities: true },
};

const MARKED_CLASS_ATTRIBUTE = ` data-attr-class="${CLASS_MARKER}`;

// transformAnyTag kept only marked data-attr-class values; the random marker cannot occur in user text.
function restoreMarkedClasses(html: string): string {
    return html.includes(MARKED_CLASS_ATTRIBUTE) ? html.replaceAll(MARKED_CLASS_ATTRIBUTE, ' class="') : html;
}

export function sanitizeHtml(html: string): string {
    return restoreMarkedClasses(sanitize(html, SANITIZE_OPTIONS));
}

// ---------------------------------------------------------------------------
// Public entry points
// ---------------------------------------------------------------------------

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
