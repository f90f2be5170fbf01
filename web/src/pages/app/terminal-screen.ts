/**
 * The xterm.js side of the Terminal tab, loaded only when a terminal is first opened (dynamic import), so that
 * xterm.js stays out of the app page's JavaScript until then.
 */
import '@xterm/xterm/css/xterm.css';

import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';

import { takeCssomStyles } from './terminal-styles.ts';

export interface ScreenOptions {
    /** What is typed (or pasted), as bytes. */
    onInput(bytes: Uint8Array): void;
    /** The screen's size in cells changed (the first size included). */
    onResize(size: { cols: number; rows: number }): void;
}

export interface ScreenHandle {
    write(bytes: Uint8Array): void;
    /** Stops taking input (the session ended); what was written stays readable. */
    end(): void;
    focus(): void;
    dispose(): void;
}

const encoder = new TextEncoder();

export function createScreen(host: HTMLElement, options: ScreenOptions): ScreenHandle {
    const giveStylesBack = takeCssomStyles();
    const terminal = new Terminal({
        cursorBlink: true,
        fontFamily: "ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace",
        fontSize: 14,
        scrollback: 5000,
        theme: { background: '#10161f', foreground: '#e6e9ee' },
    });
    const fit = new FitAddon();
    terminal.loadAddon(fit);
    terminal.open(host);
    const inputs = [
        terminal.onData((data) => options.onInput(encoder.encode(data))),
        // Mouse reports in the terminal's old single-byte encoding: each character is one byte.
        terminal.onBinary((data) => options.onInput(Uint8Array.from(data, (character) => character.charCodeAt(0) & 0xff))),
    ];
    terminal.onResize((size) => options.onResize(size));
    const refit = () => {
        if (host.clientWidth > 0) fit.fit();
    };
    const observer = new ResizeObserver(refit);
    observer.observe(host);
    refit();
    options.onResize({ cols: terminal.cols, rows: terminal.rows });

    return {
        write: (bytes) => terminal.write(bytes),
        end() {
            inputs.forEach((input) => input.dispose());
            terminal.options.cursorBlink = false;
            terminal.options.disableStdin = true;
        },
        focus: () => terminal.focus(),
        dispose() {
            observer.disconnect();
            terminal.dispose();
            giveStylesBack();
        },
    };
}
