import { useEffect, useId, useRef, useState } from 'preact/hooks';

import { api, type ApiError, asApiError, useApi } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { useSubmit } from '../../components/use-submit.ts';
import type * as ScreenModule from './terminal-screen.ts';
import type { ScreenHandle } from './terminal-screen.ts';
import type { App, TerminalState, TerminalTicket } from './types.ts';

let screenModule: Promise<typeof ScreenModule> | undefined;

/** xterm.js is fetched the first time a terminal is opened, once. */
function loadScreen(): Promise<typeof ScreenModule> {
    screenModule ??= import('./terminal-screen.ts');
    return screenModule;
}

/** What is typed or pasted goes to the server in frames of at most this many bytes. */
const INPUT_FRAME_BYTES = 16 * 1024;

/** The server closes an idle session with this code (plugins/deploy/domain/terminal/terminal-session.ts). */
const IDLE_CLOSE_CODE = 4000;

type Connection =
    | { state: 'none' }
    | { state: 'connecting'; service: string }
    | { state: 'open'; service: string; container: string }
    | { state: 'closed'; container: string; why: string };

/** "15 minutes", "90 seconds". */
function idleWords(seconds: number): string {
    const [count, unit] = seconds % 60 === 0 ? [seconds / 60, 'minute'] : [seconds, 'second'];
    return `${count} ${unit}${count === 1 ? '' : 's'}`;
}

/** Why a session ended, in words, from the socket's close. */
function closedWhy(event: CloseEvent, byUs: boolean): string {
    if (byUs) {
        return 'You disconnected.';
    }

    if (event.code === IDLE_CLOSE_CODE) {
        return `The session was ${event.reason}. Connect again to go on.`;
    }

    return event.reason ? `Closed: ${event.reason}.` : 'The connection to Gatehouse was lost.';
}

function socketUrl(ticket: TerminalTicket): string {
    const url = new URL(`${ticket.path}?ticket=${encodeURIComponent(ticket.ticket)}`, window.location.href);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    return url.toString();
}

/**
 * A shell in one of the app's running containers, for administrators, when the server has the terminal on
 * (`GET /api/apps/{name}/terminal`): a ticket asked for, then a WebSocket whose bytes an xterm.js screen shows and
 * types. Closed by Disconnect, by the shell's exit, or by the server after its idle time, which it says.
 */
export function TerminalTab(props: { app: App }) {
    const id = useId();
    const base = `/api/apps/${encodeURIComponent(props.app.name)}/terminal`;
    const state = useApi<TerminalState>(base);
    const [service, setService] = useState('');
    const [connection, setConnection] = useState<Connection>({ state: 'none' });
    const { busy, error, submit } = useSubmit<ApiError>(asApiError);
    const frame = useRef<HTMLDivElement>(null);
    const host = useRef<HTMLDivElement>(null);
    const screen = useRef<ScreenHandle | undefined>(undefined);
    const socket = useRef<WebSocket | undefined>(undefined);
    const disconnect = useRef<() => void>(() => undefined);

    // The page left: the session ends, the screen goes.
    useEffect(
        () => () => {
            socket.current?.close(1000, 'the page was left');
            screen.current?.dispose();
        },
        [],
    );

    if (!state.data) {
        return state.loading ? <Spinner label="Asking whether the terminal is on…" /> : <ErrorText error={state.error} />;
    }

    const { enabled, idleSeconds, services } = state.data;
    if (!enabled) {
        return (
            <p class="terminal-off">
                The terminal is off: set TERMINAL_ENABLED=true in Gatehouse’s environment and restart it to open a shell in an app’s
                container from here.
            </p>
        );
    }

    const chosen = services.includes(service) ? service : (services[0] ?? '');
    const live = connection.state === 'connecting' || connection.state === 'open';

    const connect = () =>
        submit(async () => {
            const ticket = await api.post<TerminalTicket>(base, { service: chosen });
            const module = await loadScreen();
            if (!host.current || !frame.current) return;
            screen.current?.dispose();
            // Shown before xterm.js measures it.
            frame.current.hidden = false;
            setConnection({ state: 'connecting', service: ticket.service });
            const webSocket = new WebSocket(socketUrl(ticket));
            webSocket.binaryType = 'arraybuffer';
            socket.current = webSocket;
            let size: { cols: number; rows: number } | undefined;
            const sendSize = () => {
                if (size && webSocket.readyState === WebSocket.OPEN) webSocket.send(JSON.stringify({ resize: size }));
            };
            const opened = module.createScreen(host.current, {
                // A long paste goes in several frames: the server takes frames of up to 64 KiB.
                onInput: (bytes) => {
                    for (let start = 0; start < bytes.length && webSocket.readyState === WebSocket.OPEN; start += INPUT_FRAME_BYTES) {
                        webSocket.send(bytes.subarray(start, start + INPUT_FRAME_BYTES));
                    }
                },
                onResize: (next) => {
                    size = next;
                    sendSize();
                },
            });
            screen.current = opened;
            let byUs = false;
            webSocket.addEventListener('open', () => {
                sendSize();
                opened.focus();
                setConnection({ state: 'open', service: ticket.service, container: ticket.container });
            });
            webSocket.addEventListener('message', (message: MessageEvent<ArrayBuffer | string>) =>
                opened.write(typeof message.data === 'string' ? new TextEncoder().encode(message.data) : new Uint8Array(message.data)),
            );
            webSocket.addEventListener('close', (event) => {
                opened.end();
                if (socket.current === webSocket) socket.current = undefined;
                setConnection({ state: 'closed', container: ticket.container, why: closedWhy(event, byUs) });
            });
            disconnect.current = () => {
                byUs = true;
                webSocket.close(1000, 'closed in the browser');
            };
        });

    return (
        <div class="terminal">
            <p class="field-hint">
                A shell in the app’s container, as the container’s user (bash when the image has it, else sh). Each session is written to
                the audit log with who opened it, when and for how long, never what is typed; after {idleWords(idleSeconds)} with neither
                input nor output it is closed.
            </p>
            {services.length === 0 ? (
                <p>No container of this app is running: start the app to open a terminal in it.</p>
            ) : (
                <div class="tab-toolbar terminal-toolbar">
                    {services.length > 1 ? (
                        <>
                            <label for={`${id}-service`}>Service</label>
                            <select
                                id={`${id}-service`}
                                value={chosen}
                                disabled={live}
                                onChange={(event) => setService(event.currentTarget.value)}
                            >
                                {services.map((name) => (
                                    <option key={name} value={name}>
                                        {name}
                                    </option>
                                ))}
                            </select>
                        </>
                    ) : (
                        <span>
                            Service <strong>{chosen}</strong>
                        </span>
                    )}
                    {live ? (
                        <Button onClick={() => disconnect.current()}>Disconnect</Button>
                    ) : (
                        <Button variant="primary" busy={busy} onClick={() => void connect()}>
                            {connection.state === 'closed' ? 'Connect again' : 'Connect'}
                        </Button>
                    )}
                </div>
            )}
            <ErrorText error={error} />
            <p class="field-hint" role="status">
                {connection.state === 'connecting'
                    ? `Connecting to ${connection.service}…`
                    : connection.state === 'open'
                      ? `Connected to ${connection.container}.`
                      : connection.state === 'closed'
                        ? connection.why
                        : ''}
            </p>
            <div ref={frame} class="terminal-frame" hidden={connection.state === 'none'}>
                <div ref={host} class="terminal-screen" data-state={connection.state} role="region" aria-label="Terminal" />
            </div>
        </div>
    );
}
