// The web UI's build (web/dist) and its dev server, which passes /api on to a running Gatehouse.
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

const gatehouse = process.env.GATEHOUSE_URL ?? `http://127.0.0.1:${process.env.PORT ?? '3000'}`;

export default defineConfig({
    root: import.meta.dirname,
    plugins: [preact()],
    build: {
        outDir: 'dist',
        emptyOutDir: true,
        target: 'es2022',
        assetsDir: 'assets',
        sourcemap: false,
        // CodeMirror's chunk (about 540 KB, 180 KB gzipped) loads only with the editors' pages; the first page's
        // size is what bench/web.ts measures against its budget.
        chunkSizeWarningLimit: 800,
    },
    server: {
        host: '127.0.0.1',
        port: Number(process.env.WEB_DEV_PORT ?? 5173),
        strictPort: true,
        proxy: {
            '/api': {
                target: gatehouse,
                changeOrigin: true,
                // Gatehouse refuses writes whose Origin is not its own: the dev server's is rewritten to it.
                configure: (proxy) => proxy.on('proxyReq', (request) => request.setHeader('origin', new URL(gatehouse).origin)),
            },
        },
    },
});
