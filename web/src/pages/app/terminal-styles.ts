/**
 * xterm.js writes its run-time styles (the theme's colours, the font, the cell size, the scrollbar) into `<style>`
 * elements it makes, and a 24-bit colour into a cell's `style` attribute. The UI's Content-Security-Policy
 * (`style-src 'self'`, no 'unsafe-inline', plugins/web.ts) refuses both, and xterm.js takes no nonce. The same rules
 * reach the page through the CSSOM instead, which CSP leaves to the page's own scripts (it guards against styles in
 * markup, not against what a trusted script sets), as CodeMirror's style-mod does with `adoptedStyleSheets`:
 *
 * - while a terminal is shown, a `<style>` xterm.js asks for is an inert `<template>` whose text is kept in a
 *   constructed stylesheet adopted by the document (and dropped with it when xterm.js removes the element);
 * - `setAttribute('style', text)` sets `element.style.cssText` instead, which gives the element the same attribute.
 *
 * Nothing else in the UI makes a `<style>` element or a style attribute (CSP would refuse them), so the change is
 * invisible to the rest of the page; it is undone when the last terminal is disposed.
 */

let users = 0;
let restore: (() => void) | undefined;

/** A stand-in for a `<style>` element: its text goes to an adopted constructed stylesheet. */
function adoptedStyleElement(document: Document, createElement: Document['createElement']): HTMLElement {
    const element = createElement.call(document, 'template');
    const sheet = new CSSStyleSheet();
    let text = '';
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
    Object.defineProperty(element, 'textContent', {
        configurable: true,
        get: () => text,
        set: (value: string | null) => {
            text = value ?? '';
            sheet.replaceSync(text);
        },
    });
    const remove = element.remove.bind(element);
    element.remove = () => {
        remove();
        document.adoptedStyleSheets = document.adoptedStyleSheets.filter((adopted) => adopted !== sheet);
    };
    return element;
}

function install(): () => void {
    const createElement = Document.prototype.createElement;
    const setAttribute = Element.prototype.setAttribute;
    Document.prototype.createElement = function (this: Document, tagName: string, options?: ElementCreationOptions) {
        return tagName.toLowerCase() === 'style' ? adoptedStyleElement(this, createElement) : createElement.call(this, tagName, options);
    } as Document['createElement'];
    Element.prototype.setAttribute = function (this: Element, name: string, value: string) {
        if (name.toLowerCase() === 'style' && this instanceof HTMLElement) {
            this.style.cssText = value;
            return;
        }

        setAttribute.call(this, name, value);
    };
    return () => {
        Document.prototype.createElement = createElement;
        Element.prototype.setAttribute = setAttribute;
    };
}

/** Styles as the CSSOM sets them, for as long as a terminal uses them; answers what gives them back. */
export function takeCssomStyles(): () => void {
    users += 1;
    restore ??= install();
    let released = false;
    return () => {
        if (released) return;
        released = true;
        users -= 1;
        if (users === 0) {
            restore?.();
            restore = undefined;
        }
    };
}
