// The sanitiser: a policy modelled on Gitea's bluemonday UGC policy, in sanitize-html.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';

import type sanitize from 'sanitize-html';

// Renderer-generated classes travel through the sanitiser as data-attr-class
// values carrying this prefix; user-supplied data-attr-class never has it.
const CLASS_MARKER = `gh${randomBytes(8).toString('hex')}-`;

export function markedClass(value: string): string {
    return CLASS_MARKER + value;
}

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
let loadedSanitize: typeof sanitize | undefined;

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

// sanitize-html ends void elements with ' />', Gitea's renderer (x/net/html) with '/>'. Text and attribute values
// have their '>' escaped, so the sequence occurs nowhere else.
function goSelfClosingTags(html: string): string {
    return html.includes(' />') ? html.replaceAll(' />', '/>') : html;
}

export function sanitizeHtml(html: string): string {
    // Loaded on first use, not at start: sanitize-html and its parser are about 15 MB and a third of a second.
    loadedSanitize ??= createRequire(import.meta.url)('sanitize-html') as typeof sanitize;
    return goSelfClosingTags(restoreMarkedClasses(loadedSanitize(html, SANITIZE_OPTIONS)));
}
