// Gitea's '[[...]]' short links (modules/markup/html_link.go, shortLinkProcessor): '[[Page]]', '[[Name|Page]]',
// the MediaWiki order when one part is clearly a URL, and images with optional 'alt=' and 'title=' arguments.
import { goPathBase, goPathEscape, goPathExt } from './go-url.ts';

export interface ShortLink {
    /** As written, or escaped the way Gitea guesses a wiki page name; resolved later like any link. */
    href: string;
    /** The link text (for a page). */
    name: string;
    image?: { title: string; alt: string };
}

const IMAGE_EXTENSIONS = new Set(['.jpg', '.jpeg', '.png', '.tif', '.tiff', '.webp', '.gif', '.bmp', '.ico', '.svg']);
const FULL_URL = /^[a-z][-+\w]+:/;

// Quotes around an argument's value; x/net/html turns typographic quotes into UTF-8 ones, which Gitea also strips.
function unquote(value: string): string {
    if (value.length <= 1) {
        return value;
    }
    if ((value.startsWith('“') && value.endsWith('”')) || (value.startsWith('‘') && value.endsWith('’'))) {
        return value.slice(1, -1);
    }
    if ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'"))) {
        return value.slice(1, -1);
    }
    return value.startsWith("'") && value.endsWith('’') ? value.slice(1, -1) : value;
}

/** The parts of '[[content]]tail'; unescape decodes an argument's value as html.UnescapeString does. */
function propsOf(content: string, unescape: (value: string) => string): Map<string, string> {
    const props = new Map<string, string>();
    for (const part of content.split('|')) {
        const equals = part.indexOf('=');
        if (equals !== -1) {
            props.set(part.slice(0, equals), unquote(unescape(part.slice(equals + 1))));
        } else if ((props.get('name') ?? '') !== '') {
            props.set('link', part.trim());
        } else if (FULL_URL.test(part)) {
            // GitHub's order is [[name|link]]; a URL first means MediaWiki's [[link|name]].
            if ((props.get('link') ?? '') !== '') {
                props.set('name', props.get('link') ?? '');
            }
            props.set('link', part.trim());
        } else {
            props.set('name', part);
        }
    }
    return props;
}

export function shortLinkOf(content: string, tail: string, unescape: (value: string) => string): ShortLink {
    const props = propsOf(content, unescape);
    const prop = (key: string) => props.get(key) ?? '';
    let href = prop('link') || prop('name');
    const name = (prop('title') || prop('name') || href) + tail;
    const isImage = IMAGE_EXTENSIONS.has(goPathExt(href));
    // Gitea's guess at a wiki page name, only for links without a '/': spaces become '+' for images and '-' for pages.
    if (!FULL_URL.test(href) && !href.includes('/')) {
        href = goPathEscape(href.replaceAll(' ', isImage ? '+' : '-'));
    }
    if (!isImage) {
        return { href, name };
    }
    return { href, name, image: { title: prop('title') || prop('alt') || goPathBase(name), alt: prop('alt') || name } };
}
