import { ReplyPublisher } from "../src/queues/reply-publisher.js";
const sent: string[] = [];
const r = new ReplyPublisher(async (e) => { sent.push(JSON.stringify(e)); await new Promise((x) => setTimeout(x, 0.2)); }, 12);
for (let i = 0; i < 20; i++) { r.publish({ type: "token", index: 0, text: String(i) } as any); await new Promise((x) => setTimeout(x, 8)); }
r.publish({ type: "done" } as any);
await r.drained();
console.log(sent.length, sent.join(" "));
