/** What the server says about itself: `/admin/version/` (superusers only) and `/root/config/` (anyone). */
import type { ApiOperations } from './api.ts';

export const systemOperations: ApiOperations = {
    admin_version_retrieve: {
        access: 'superuser',
        run({ store }) {
            return {
                status: 200,
                body: {
                    version_current: store.version,
                    version_latest: store.version,
                    version_latest_valid: true,
                    build_hash: '',
                    outdated: false,
                    outpost_outdated: false,
                },
            };
        },
    },

    root_config_retrieve: {
        access: 'anonymous',
        run() {
            return {
                status: 200,
                body: {
                    error_reporting: { enabled: false, sentry_dsn: '', environment: 'customer', send_pii: false, traces_sample_rate: 0.1 },
                    capabilities: ['can_save_media', 'can_impersonate', 'can_debug'],
                    cache_timeout: 300,
                    cache_timeout_flows: 300,
                    cache_timeout_policies: 300,
                },
            };
        },
    },
};
