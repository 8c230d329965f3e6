--
-- PostgreSQL database dump
--

\restrict 5gAir6W03kTV2rOa2blivRz2wUKqUj0unwAcucaRwAFHESdIIM21qIr44WytUK9

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: ptree_entries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ptree_entries (
    session text NOT NULL,
    seq bigint NOT NULL,
    id text NOT NULL,
    parent text,
    type text NOT NULL,
    payload text NOT NULL
);


--
-- Name: ptree_schema; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ptree_schema (
    version integer NOT NULL
);


--
-- Name: ptree_sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ptree_sessions (
    id text NOT NULL,
    header text NOT NULL,
    leaf text,
    name text,
    updated timestamp with time zone NOT NULL,
    entry_count bigint NOT NULL,
    incarnation text NOT NULL
);


--
-- Data for Name: ptree_entries; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ptree_entries VALUES ('plain-0', 0, 'e1', NULL, 'message', '{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"please deploy the kettle service 0"}}');
INSERT INTO public.ptree_entries VALUES ('plain-0', 1, 'e2', 'e1', 'message', '{"type":"message","id":"e2","parentId":"e1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"reading the config first"},{"type":"text","text":"Reading the configuration."},{"type":"toolCall","id":"call0","name":"read","arguments":{"path":"/etc/kettle.toml"}}]}}');
INSERT INTO public.ptree_entries VALUES ('plain-0', 2, 'e3', 'e2', 'message', '{"type":"message","id":"e3","parentId":"e2","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"toolResult","toolCallId":"call0","toolName":"read","content":[{"type":"text","text":"port = 8000\nwater = boiling"}],"isError":false}}');
INSERT INTO public.ptree_entries VALUES ('plain-0', 3, 'e4', 'e3', 'message', '{"type":"message","id":"e4","parentId":"e3","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":"The kettle listens on its port."}}');
INSERT INTO public.ptree_entries VALUES ('plain-0', 4, 'e5', 'e4', 'label', '{"type":"label","id":"e5","parentId":"e4","timestamp":"2026-01-01T00:00:00.000Z","targetId":"e3","label":"config read"}');
INSERT INTO public.ptree_entries VALUES ('plain-0', 5, 'e6', 'e3', 'message', '{"type":"message","id":"e6","parentId":"e3","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"try the teapot instead"}}');
INSERT INTO public.ptree_entries VALUES ('plain-0', 6, 'e7', 'e6', 'branch_summary', '{"type":"branch_summary","id":"e7","parentId":"e6","timestamp":"2026-01-01T00:00:00.000Z","fromId":"e3","summary":"abandoned the kettle branch"}');
INSERT INTO public.ptree_entries VALUES ('plain-0', 7, 'e8', 'e7', 'custom_message', '{"type":"custom_message","id":"e8","parentId":"e7","timestamp":"2026-01-01T00:00:00.000Z","customType":"note","content":"custom note 0 — naïve café","display":true}');
INSERT INTO public.ptree_entries VALUES ('plain-0', 8, 'e9', 'e8', 'compaction', '{"type":"compaction","id":"e9","parentId":"e8","timestamp":"2026-01-01T00:00:00.000Z","summary":"summary of the deploy so far","firstKeptEntryId":"e2","tokensBefore":1000}');
INSERT INTO public.ptree_entries VALUES ('plain-0', 9, 'e10', 'e9', 'message', '{"type":"message","id":"e10","parentId":"e9","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"a picture"},{"type":"image","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB","mimeType":"image/png"}]}}');
INSERT INTO public.ptree_entries VALUES ('"\"quoted"', 0, 'e1', NULL, 'message', '{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"please deploy the kettle service 1"}}');
INSERT INTO public.ptree_entries VALUES ('"\"quoted"', 1, 'e2', 'e1', 'message', '{"type":"message","id":"e2","parentId":"e1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"reading the config first"},{"type":"text","text":"Reading the configuration."},{"type":"toolCall","id":"call1","name":"read","arguments":{"path":"/etc/kettle.toml"}}]}}');
INSERT INTO public.ptree_entries VALUES ('"\"quoted"', 2, 'e3', 'e2', 'message', '{"type":"message","id":"e3","parentId":"e2","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"toolResult","toolCallId":"call1","toolName":"read","content":[{"type":"text","text":"port = 8001\nwater = boiling"}],"isError":false}}');
INSERT INTO public.ptree_entries VALUES ('"\"quoted"', 3, 'e4', 'e3', 'message', '{"type":"message","id":"e4","parentId":"e3","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":"The kettle listens on its port."}}');
INSERT INTO public.ptree_entries VALUES ('"\"quoted"', 4, 'e5', 'e4', 'session_info', '{"type":"session_info","id":"e5","parentId":"e4","timestamp":"2026-01-01T00:00:00.000Z","name":"kettle deploy 1"}');
INSERT INTO public.ptree_entries VALUES ('"\"quoted"', 5, 'e6', 'e5', 'custom_message', '{"type":"custom_message","id":"e6","parentId":"e5","timestamp":"2026-01-01T00:00:00.000Z","customType":"note","content":"custom note 1 — naïve café","display":true}');
INSERT INTO public.ptree_entries VALUES ('"\"quoted"', 6, 'e7', 'e6', 'compaction', '{"type":"compaction","id":"e7","parentId":"e6","timestamp":"2026-01-01T00:00:00.000Z","summary":"summary of the deploy so far","firstKeptEntryId":"e2","tokensBefore":1001}');
INSERT INTO public.ptree_entries VALUES ('"\"quoted"', 7, 'e8', 'e7', 'message', '{"type":"message","id":"e8","parentId":"e7","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"a picture"},{"type":"image","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB","mimeType":"image/png"}]}}');
INSERT INTO public.ptree_entries VALUES ('"nul\u0000id"', 0, 'e1', NULL, 'message', '{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"please deploy the kettle service 2"}}');
INSERT INTO public.ptree_entries VALUES ('"nul\u0000id"', 1, 'e2', 'e1', 'message', '{"type":"message","id":"e2","parentId":"e1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"reading the config first"},{"type":"text","text":"Reading the configuration."},{"type":"toolCall","id":"call2","name":"read","arguments":{"path":"/etc/kettle.toml"}}]}}');
INSERT INTO public.ptree_entries VALUES ('"nul\u0000id"', 2, 'e3', 'e2', 'message', '{"type":"message","id":"e3","parentId":"e2","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"toolResult","toolCallId":"call2","toolName":"read","content":[{"type":"text","text":"port = 8002\nwater = boiling"}],"isError":false}}');
INSERT INTO public.ptree_entries VALUES ('"nul\u0000id"', 3, 'e4', 'e3', 'message', '{"type":"message","id":"e4","parentId":"e3","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":"The kettle listens on its port."}}');
INSERT INTO public.ptree_entries VALUES ('"nul\u0000id"', 4, 'e5', 'e4', 'custom_message', '{"type":"custom_message","id":"e5","parentId":"e4","timestamp":"2026-01-01T00:00:00.000Z","customType":"note","content":"custom note 2 — naïve café","display":true}');
INSERT INTO public.ptree_entries VALUES ('"nul\u0000id"', 5, 'e6', 'e5', 'compaction', '{"type":"compaction","id":"e6","parentId":"e5","timestamp":"2026-01-01T00:00:00.000Z","summary":"summary of the deploy so far","firstKeptEntryId":"e2","tokensBefore":1002}');
INSERT INTO public.ptree_entries VALUES ('"nul\u0000id"', 6, 'e7', 'e6', 'message', '{"type":"message","id":"e7","parentId":"e6","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"a picture"},{"type":"image","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB","mimeType":"image/png"}]}}');
INSERT INTO public.ptree_entries VALUES ('ünï-çødé', 0, 'e1', NULL, 'message', '{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"please deploy the kettle service 3"}}');
INSERT INTO public.ptree_entries VALUES ('ünï-çødé', 1, 'e2', 'e1', 'message', '{"type":"message","id":"e2","parentId":"e1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"reading the config first"},{"type":"text","text":"Reading the configuration."},{"type":"toolCall","id":"call3","name":"read","arguments":{"path":"/etc/kettle.toml"}}]}}');
INSERT INTO public.ptree_entries VALUES ('ünï-çødé', 2, 'e3', 'e2', 'message', '{"type":"message","id":"e3","parentId":"e2","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"toolResult","toolCallId":"call3","toolName":"read","content":[{"type":"text","text":"port = 8003\nwater = boiling"}],"isError":false}}');
INSERT INTO public.ptree_entries VALUES ('ünï-çødé', 3, 'e4', 'e3', 'message', '{"type":"message","id":"e4","parentId":"e3","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":"The kettle listens on its port."}}');
INSERT INTO public.ptree_entries VALUES ('ünï-çødé', 4, 'e5', 'e4', 'session_info', '{"type":"session_info","id":"e5","parentId":"e4","timestamp":"2026-01-01T00:00:00.000Z","name":"kettle deploy 3"}');
INSERT INTO public.ptree_entries VALUES ('ünï-çødé', 5, 'e6', 'e5', 'label', '{"type":"label","id":"e6","parentId":"e5","timestamp":"2026-01-01T00:00:00.000Z","targetId":"e3","label":"config read"}');
INSERT INTO public.ptree_entries VALUES ('ünï-çødé', 6, 'e7', 'e3', 'message', '{"type":"message","id":"e7","parentId":"e3","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"try the teapot instead"}}');
INSERT INTO public.ptree_entries VALUES ('ünï-çødé', 7, 'e8', 'e7', 'branch_summary', '{"type":"branch_summary","id":"e8","parentId":"e7","timestamp":"2026-01-01T00:00:00.000Z","fromId":"e3","summary":"abandoned the kettle branch"}');
INSERT INTO public.ptree_entries VALUES ('ünï-çødé', 8, 'e9', 'e8', 'custom_message', '{"type":"custom_message","id":"e9","parentId":"e8","timestamp":"2026-01-01T00:00:00.000Z","customType":"note","content":"custom note 3 — naïve café","display":true}');
INSERT INTO public.ptree_entries VALUES ('ünï-çødé', 9, 'e10', 'e9', 'compaction', '{"type":"compaction","id":"e10","parentId":"e9","timestamp":"2026-01-01T00:00:00.000Z","summary":"summary of the deploy so far","firstKeptEntryId":"e2","tokensBefore":1003}');
INSERT INTO public.ptree_entries VALUES ('ünï-çødé', 10, 'e11', 'e10', 'message', '{"type":"message","id":"e11","parentId":"e10","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"a picture"},{"type":"image","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB","mimeType":"image/png"}]}}');
INSERT INTO public.ptree_entries VALUES ('s4', 0, 'e1', NULL, 'message', '{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"please deploy the kettle service 4"}}');
INSERT INTO public.ptree_entries VALUES ('s4', 1, 'e2', 'e1', 'message', '{"type":"message","id":"e2","parentId":"e1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"reading the config first"},{"type":"text","text":"Reading the configuration."},{"type":"toolCall","id":"call4","name":"read","arguments":{"path":"/etc/kettle.toml"}}]}}');
INSERT INTO public.ptree_entries VALUES ('s4', 2, 'e3', 'e2', 'message', '{"type":"message","id":"e3","parentId":"e2","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"toolResult","toolCallId":"call4","toolName":"read","content":[{"type":"text","text":"port = 8004\nwater = boiling"}],"isError":false}}');
INSERT INTO public.ptree_entries VALUES ('s4', 3, 'e4', 'e3', 'message', '{"type":"message","id":"e4","parentId":"e3","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":"The kettle listens on its port."}}');
INSERT INTO public.ptree_entries VALUES ('s4', 4, 'e5', 'e4', 'custom_message', '{"type":"custom_message","id":"e5","parentId":"e4","timestamp":"2026-01-01T00:00:00.000Z","customType":"note","content":"custom note 4 — naïve café","display":true}');
INSERT INTO public.ptree_entries VALUES ('s4', 5, 'e6', 'e5', 'compaction', '{"type":"compaction","id":"e6","parentId":"e5","timestamp":"2026-01-01T00:00:00.000Z","summary":"summary of the deploy so far","firstKeptEntryId":"e2","tokensBefore":1004}');
INSERT INTO public.ptree_entries VALUES ('s4', 6, 'e7', 'e6', 'message', '{"type":"message","id":"e7","parentId":"e6","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"a picture"},{"type":"image","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB","mimeType":"image/png"}]}}');
INSERT INTO public.ptree_entries VALUES ('s5', 0, 'e1', NULL, 'message', '{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"please deploy the kettle service 5"}}');
INSERT INTO public.ptree_entries VALUES ('s5', 1, 'e2', 'e1', 'message', '{"type":"message","id":"e2","parentId":"e1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"reading the config first"},{"type":"text","text":"Reading the configuration."},{"type":"toolCall","id":"call5","name":"read","arguments":{"path":"/etc/kettle.toml"}}]}}');
INSERT INTO public.ptree_entries VALUES ('s5', 2, 'e3', 'e2', 'message', '{"type":"message","id":"e3","parentId":"e2","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"toolResult","toolCallId":"call5","toolName":"read","content":[{"type":"text","text":"port = 8005\nwater = boiling"}],"isError":false}}');
INSERT INTO public.ptree_entries VALUES ('s5', 3, 'e4', 'e3', 'message', '{"type":"message","id":"e4","parentId":"e3","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":"The kettle listens on its port."}}');
INSERT INTO public.ptree_entries VALUES ('s5', 4, 'e5', 'e4', 'session_info', '{"type":"session_info","id":"e5","parentId":"e4","timestamp":"2026-01-01T00:00:00.000Z","name":"kettle deploy 5"}');
INSERT INTO public.ptree_entries VALUES ('s5', 5, 'e6', 'e5', 'custom_message', '{"type":"custom_message","id":"e6","parentId":"e5","timestamp":"2026-01-01T00:00:00.000Z","customType":"note","content":"custom note 5 — naïve café","display":true}');
INSERT INTO public.ptree_entries VALUES ('s5', 6, 'e7', 'e6', 'compaction', '{"type":"compaction","id":"e7","parentId":"e6","timestamp":"2026-01-01T00:00:00.000Z","summary":"summary of the deploy so far","firstKeptEntryId":"e2","tokensBefore":1005}');
INSERT INTO public.ptree_entries VALUES ('s5', 7, 'e8', 'e7', 'message', '{"type":"message","id":"e8","parentId":"e7","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"a picture"},{"type":"image","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB","mimeType":"image/png"}]}}');
INSERT INTO public.ptree_entries VALUES ('s6', 0, 'e1', NULL, 'message', '{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"please deploy the kettle service 6"}}');
INSERT INTO public.ptree_entries VALUES ('s6', 1, 'e2', 'e1', 'message', '{"type":"message","id":"e2","parentId":"e1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"reading the config first"},{"type":"text","text":"Reading the configuration."},{"type":"toolCall","id":"call6","name":"read","arguments":{"path":"/etc/kettle.toml"}}]}}');
INSERT INTO public.ptree_entries VALUES ('s6', 2, 'e3', 'e2', 'message', '{"type":"message","id":"e3","parentId":"e2","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"toolResult","toolCallId":"call6","toolName":"read","content":[{"type":"text","text":"port = 8006\nwater = boiling"}],"isError":false}}');
INSERT INTO public.ptree_entries VALUES ('s6', 3, 'e4', 'e3', 'message', '{"type":"message","id":"e4","parentId":"e3","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":"The kettle listens on its port."}}');
INSERT INTO public.ptree_entries VALUES ('s6', 4, 'e5', 'e4', 'label', '{"type":"label","id":"e5","parentId":"e4","timestamp":"2026-01-01T00:00:00.000Z","targetId":"e3","label":"config read"}');
INSERT INTO public.ptree_entries VALUES ('s6', 5, 'e6', 'e3', 'message', '{"type":"message","id":"e6","parentId":"e3","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"try the teapot instead"}}');
INSERT INTO public.ptree_entries VALUES ('s6', 6, 'e7', 'e6', 'branch_summary', '{"type":"branch_summary","id":"e7","parentId":"e6","timestamp":"2026-01-01T00:00:00.000Z","fromId":"e3","summary":"abandoned the kettle branch"}');
INSERT INTO public.ptree_entries VALUES ('s6', 7, 'e8', 'e7', 'custom_message', '{"type":"custom_message","id":"e8","parentId":"e7","timestamp":"2026-01-01T00:00:00.000Z","customType":"note","content":"custom note 6 — naïve café","display":true}');
INSERT INTO public.ptree_entries VALUES ('s6', 8, 'e9', 'e8', 'compaction', '{"type":"compaction","id":"e9","parentId":"e8","timestamp":"2026-01-01T00:00:00.000Z","summary":"summary of the deploy so far","firstKeptEntryId":"e2","tokensBefore":1006}');
INSERT INTO public.ptree_entries VALUES ('s6', 9, 'e10', 'e9', 'message', '{"type":"message","id":"e10","parentId":"e9","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"a picture"},{"type":"image","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB","mimeType":"image/png"}]}}');
INSERT INTO public.ptree_entries VALUES ('s7', 0, 'e1', NULL, 'message', '{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"please deploy the kettle service 7"}}');
INSERT INTO public.ptree_entries VALUES ('s7', 1, 'e2', 'e1', 'message', '{"type":"message","id":"e2","parentId":"e1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"reading the config first"},{"type":"text","text":"Reading the configuration."},{"type":"toolCall","id":"call7","name":"read","arguments":{"path":"/etc/kettle.toml"}}]}}');
INSERT INTO public.ptree_entries VALUES ('s7', 2, 'e3', 'e2', 'message', '{"type":"message","id":"e3","parentId":"e2","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"toolResult","toolCallId":"call7","toolName":"read","content":[{"type":"text","text":"port = 8007\nwater = boiling"}],"isError":false}}');
INSERT INTO public.ptree_entries VALUES ('s7', 3, 'e4', 'e3', 'message', '{"type":"message","id":"e4","parentId":"e3","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":"The kettle listens on its port."}}');
INSERT INTO public.ptree_entries VALUES ('s7', 4, 'e5', 'e4', 'session_info', '{"type":"session_info","id":"e5","parentId":"e4","timestamp":"2026-01-01T00:00:00.000Z","name":"kettle deploy 7"}');
INSERT INTO public.ptree_entries VALUES ('s7', 5, 'e6', 'e5', 'custom_message', '{"type":"custom_message","id":"e6","parentId":"e5","timestamp":"2026-01-01T00:00:00.000Z","customType":"note","content":"custom note 7 — naïve café","display":true}');
INSERT INTO public.ptree_entries VALUES ('s7', 6, 'e7', 'e6', 'compaction', '{"type":"compaction","id":"e7","parentId":"e6","timestamp":"2026-01-01T00:00:00.000Z","summary":"summary of the deploy so far","firstKeptEntryId":"e2","tokensBefore":1007}');
INSERT INTO public.ptree_entries VALUES ('s7', 7, 'e8', 'e7', 'message', '{"type":"message","id":"e8","parentId":"e7","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"a picture"},{"type":"image","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB","mimeType":"image/png"}]}}');
INSERT INTO public.ptree_entries VALUES ('s8', 0, 'e1', NULL, 'message', '{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"please deploy the kettle service 8"}}');
INSERT INTO public.ptree_entries VALUES ('s8', 1, 'e2', 'e1', 'message', '{"type":"message","id":"e2","parentId":"e1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"reading the config first"},{"type":"text","text":"Reading the configuration."},{"type":"toolCall","id":"call8","name":"read","arguments":{"path":"/etc/kettle.toml"}}]}}');
INSERT INTO public.ptree_entries VALUES ('s8', 2, 'e3', 'e2', 'message', '{"type":"message","id":"e3","parentId":"e2","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"toolResult","toolCallId":"call8","toolName":"read","content":[{"type":"text","text":"port = 8008\nwater = boiling"}],"isError":false}}');
INSERT INTO public.ptree_entries VALUES ('s8', 3, 'e4', 'e3', 'message', '{"type":"message","id":"e4","parentId":"e3","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":"The kettle listens on its port."}}');
INSERT INTO public.ptree_entries VALUES ('s8', 4, 'e5', 'e4', 'custom_message', '{"type":"custom_message","id":"e5","parentId":"e4","timestamp":"2026-01-01T00:00:00.000Z","customType":"note","content":"custom note 8 — naïve café","display":true}');
INSERT INTO public.ptree_entries VALUES ('s8', 5, 'e6', 'e5', 'compaction', '{"type":"compaction","id":"e6","parentId":"e5","timestamp":"2026-01-01T00:00:00.000Z","summary":"summary of the deploy so far","firstKeptEntryId":"e2","tokensBefore":1008}');
INSERT INTO public.ptree_entries VALUES ('s8', 6, 'e7', 'e6', 'message', '{"type":"message","id":"e7","parentId":"e6","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"a picture"},{"type":"image","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB","mimeType":"image/png"}]}}');
INSERT INTO public.ptree_entries VALUES ('s9', 0, 'e1', NULL, 'message', '{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"please deploy the kettle service 9"}}');
INSERT INTO public.ptree_entries VALUES ('s9', 1, 'e2', 'e1', 'message', '{"type":"message","id":"e2","parentId":"e1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"reading the config first"},{"type":"text","text":"Reading the configuration."},{"type":"toolCall","id":"call9","name":"read","arguments":{"path":"/etc/kettle.toml"}}]}}');
INSERT INTO public.ptree_entries VALUES ('s9', 2, 'e3', 'e2', 'message', '{"type":"message","id":"e3","parentId":"e2","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"toolResult","toolCallId":"call9","toolName":"read","content":[{"type":"text","text":"port = 8009\nwater = boiling"}],"isError":false}}');
INSERT INTO public.ptree_entries VALUES ('s9', 3, 'e4', 'e3', 'message', '{"type":"message","id":"e4","parentId":"e3","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":"The kettle listens on its port."}}');
INSERT INTO public.ptree_entries VALUES ('s9', 4, 'e5', 'e4', 'session_info', '{"type":"session_info","id":"e5","parentId":"e4","timestamp":"2026-01-01T00:00:00.000Z","name":"kettle deploy 9"}');
INSERT INTO public.ptree_entries VALUES ('s9', 5, 'e6', 'e5', 'label', '{"type":"label","id":"e6","parentId":"e5","timestamp":"2026-01-01T00:00:00.000Z","targetId":"e3","label":"config read"}');
INSERT INTO public.ptree_entries VALUES ('s9', 6, 'e7', 'e3', 'message', '{"type":"message","id":"e7","parentId":"e3","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"try the teapot instead"}}');
INSERT INTO public.ptree_entries VALUES ('s9', 7, 'e8', 'e7', 'branch_summary', '{"type":"branch_summary","id":"e8","parentId":"e7","timestamp":"2026-01-01T00:00:00.000Z","fromId":"e3","summary":"abandoned the kettle branch"}');
INSERT INTO public.ptree_entries VALUES ('s9', 8, 'e9', 'e8', 'custom_message', '{"type":"custom_message","id":"e9","parentId":"e8","timestamp":"2026-01-01T00:00:00.000Z","customType":"note","content":"custom note 9 — naïve café","display":true}');
INSERT INTO public.ptree_entries VALUES ('s9', 9, 'e10', 'e9', 'compaction', '{"type":"compaction","id":"e10","parentId":"e9","timestamp":"2026-01-01T00:00:00.000Z","summary":"summary of the deploy so far","firstKeptEntryId":"e2","tokensBefore":1009}');
INSERT INTO public.ptree_entries VALUES ('s9', 10, 'e11', 'e10', 'message', '{"type":"message","id":"e11","parentId":"e10","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"a picture"},{"type":"image","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB","mimeType":"image/png"}]}}');


--
-- Data for Name: ptree_schema; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ptree_schema VALUES (1);


--
-- Data for Name: ptree_sessions; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ptree_sessions VALUES ('plain-0', '{"type":"session","version":3,"id":"plain-0","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}', 'e10', NULL, '2026-12-03 14:09:48.27181+00', 10, '1302c35998524c259693ee4af70ef550');
INSERT INTO public.ptree_sessions VALUES ('"\"quoted"', '{"type":"session","version":3,"id":"\"quoted","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}', 'e8', 'kettle deploy 1', '2026-12-03 14:09:48.321028+00', 8, '0c3177f629524dcabf7462e15c668e1b');
INSERT INTO public.ptree_sessions VALUES ('"nul\u0000id"', '{"type":"session","version":3,"id":"nul\u0000id","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}', 'e7', NULL, '2026-12-03 14:09:48.345893+00', 7, '2ea3ad1525ca4d7e82c238bd05394b84');
INSERT INTO public.ptree_sessions VALUES ('ünï-çødé', '{"type":"session","version":3,"id":"ünï-çødé","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}', 'e11', 'kettle deploy 3', '2026-12-03 14:09:48.39361+00', 11, 'fb3486399fa04d47a6e9f73030eb59f1');
INSERT INTO public.ptree_sessions VALUES ('s4', '{"type":"session","version":3,"id":"s4","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}', 'e7', NULL, '2026-12-03 14:09:48.413643+00', 7, 'e844bb69e0174b288695a58105fb40ca');
INSERT INTO public.ptree_sessions VALUES ('s5', '{"type":"session","version":3,"id":"s5","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}', 'e8', 'kettle deploy 5', '2026-12-03 14:09:48.465713+00', 8, '7ed052f3b00c4f6abb919e2300520877');
INSERT INTO public.ptree_sessions VALUES ('s6', '{"type":"session","version":3,"id":"s6","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}', 'e10', NULL, '2026-12-03 14:09:48.509613+00', 10, 'cb1fdc13aafd42699c31939447e2c2b3');
INSERT INTO public.ptree_sessions VALUES ('s7', '{"type":"session","version":3,"id":"s7","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}', 'e8', 'kettle deploy 7', '2026-12-03 14:09:48.565776+00', 8, 'fcb1734f554f41d59cd683ed3718a368');
INSERT INTO public.ptree_sessions VALUES ('s8', '{"type":"session","version":3,"id":"s8","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}', 'e7', NULL, '2026-12-03 14:09:48.679752+00', 7, '4a3c66d8753f4e77be353c002ac82e2e');
INSERT INTO public.ptree_sessions VALUES ('s9', '{"type":"session","version":3,"id":"s9","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}', 'e11', 'kettle deploy 9', '2026-12-03 14:09:48.727067+00', 11, '7848ad7d627b474d9d8e2d640609234f');


--
-- Name: ptree_entries ptree_entries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ptree_entries
    ADD CONSTRAINT ptree_entries_pkey PRIMARY KEY (session, seq);


--
-- Name: ptree_sessions ptree_sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ptree_sessions
    ADD CONSTRAINT ptree_sessions_pkey PRIMARY KEY (id);


--
-- Name: ptree_entries_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX ptree_entries_id ON public.ptree_entries USING btree (session, id);


--
-- Name: ptree_sessions_updated; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ptree_sessions_updated ON public.ptree_sessions USING btree (updated);


--
-- PostgreSQL database dump complete
--

\unrestrict 5gAir6W03kTV2rOa2blivRz2wUKqUj0unwAcucaRwAFHESdIIM21qIr44WytUK9

