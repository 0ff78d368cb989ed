{{ config(materialized='view') }}
select id, customer, amount from {{ ref('orders') }} where status = 'shipped'
