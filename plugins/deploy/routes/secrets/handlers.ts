import type { Lifecycle } from '@hapi/hapi';

import { generateSecret as randomSecret } from '../../domain/apps/app-service.ts';

export const generateSecret: Lifecycle.Method = (request, h) =>
    h
        .response({ value: randomSecret((request.query as { kind: 'password' | 'hex16' | 'hex32' }).kind) })
        .header('Cache-Control', 'no-store');
