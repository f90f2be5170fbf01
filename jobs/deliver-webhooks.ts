/** Bree job: sends the queued webhook deliveries (see plugins/git/domain/webhooks/delivery.ts). */
import { loadMasterKey, Sealer } from '../lib/crypto.ts';
import { done, jobData, post, withDatabase } from '../lib/worker.ts';
import { Deliverer } from '../plugins/git/domain/webhooks/delivery.ts';

const { config } = jobData();
const sealer = new Sealer(loadMasterKey(config.dataDir, config.masterKey));
const succeeded = await withDatabase(async (knex) => {
    const deliverer = new Deliverer({ knex, sealer, settings: config.webhooks });
    try {
        return await deliverer.run();
    } finally {
        deliverer.close();
    }
});
post({ succeeded });
done();
