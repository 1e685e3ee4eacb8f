import "dotenv/config";
import { loadConfig } from "../config.js";
import { createLogger } from "../platform/logger.js";
import { openStorage } from "./open.js";

/** `npm run migrate`: apply every pending migration, then exit. */
const config = loadConfig(process.env);
const logger = createLogger(config.logLevel);
const storage = await openStorage(config, logger);
logger.info("migrations applied");
await storage.close();
