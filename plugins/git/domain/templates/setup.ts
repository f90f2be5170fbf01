import Path from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Server } from '@hapi/hapi';

import { TemplatesService } from './templates-service.ts';

declare module '../../../../lib/context.ts' {
    interface Services {
        templates: TemplatesService;
    }
}

const ASSETS_DIR = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'assets');

/** The ignore-file, label and licence templates: the bundled ones, and an administrator's own under the data folder. */
export default function setUpTemplates(server: Server): void {
    const { config } = server.app;
    server.app.services.templates = new TemplatesService(
        { assetsDir: ASSETS_DIR, customDir: Path.join(config.dataDir, 'custom', 'options') },
        config.publicUrl,
    );
}
