ALTER TABLE `channels` ADD `last_message_id` integer;--> statement-breakpoint
-- Backfill: the newest message of each channel, deleted or not (one index seek per channel).
UPDATE `channels` SET `last_message_id` = (SELECT max(m.`id`) FROM `messages` m WHERE m.`channel_id` = `channels`.`id`);
